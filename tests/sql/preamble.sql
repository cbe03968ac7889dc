-- What tests/sql/rls.sql and tests/sql/agents.sql share, included by each (`\ir`): the
-- transaction they run in (rolled back at their end, leaving the data as it was), the
-- grants a new Supabase project gives — every table, sequence and function to anon and
-- authenticated, so what refuses in the checks is the policies and the functions' rules,
-- never a missing grant — two signed-in players, and the checks, each raising on failure.
-- Each check that passes counts itself (pg_temp.checked), and each file ends by printing
-- `tests/sql/FILE.sql: N checks passed`, which scripts/counts.py holds to tests/counts.txt,
-- so a check that goes is a floor lowered.

begin;

grant all on all tables in schema public to anon, authenticated;
grant all on all sequences in schema public to anon, authenticated;
grant execute on all functions in schema public to anon, authenticated;

-- Two signed-in players: `auth-player` plays user 3, `auth-dotty` user 1.
update users set auth_id = 'auth-player' where id = 3;
update users set auth_id = 'auth-dotty' where id = 1;

-- One more check passed (a setting of the session: an exception block that catches rolls
-- back what it set, so each check counts after its block).
create function pg_temp.checked() returns void language sql as $$
  select set_config('familiar.checks',
    (coalesce(nullif(current_setting('familiar.checks', true), ''), '0')::int + 1)::text, false)
$$;

-- What each file prints last: how many checks passed in it.
create function pg_temp.checks_passed(file text) returns text language sql as $$
  select format('%s: %s checks passed', file,
    coalesce(nullif(current_setting('familiar.checks', true), ''), '0'))
$$;

create function pg_temp.expect_denied(statement text) returns void language plpgsql as $$
begin
  begin
    execute statement;
    raise exception 'expected this to be refused: %', statement;
  exception
    when insufficient_privilege then null;
  end;
  perform pg_temp.checked();
end $$;

-- `statement` fails with a message like `pattern`.
create function pg_temp.expect_refused(statement text, pattern text) returns void
  language plpgsql as $$
begin
  begin
    execute statement;
    raise exception 'expected this to be refused (%): %', pattern, statement;
  exception
    when others then
      if sqlerrm like 'expected this to be refused%' or sqlerrm not like pattern then
        raise exception 'expected "%", got "%": %', pattern, sqlerrm, statement;
      end if;
  end;
  perform pg_temp.checked();
end $$;

create function pg_temp.expect_count(statement text, expected bigint) returns void language plpgsql as $$
declare n bigint;
begin
  execute format('select count(*) from (%s) q', statement) into n;
  if n <> expected then
    raise exception 'expected % rows, got %: %', expected, n, statement;
  end if;
  perform pg_temp.checked();
end $$;

-- `statement` (a write) changes no row: under RLS an update or delete of rows no
-- policy shows is silently empty, so the check is what it returned.
create function pg_temp.expect_no_change(statement text) returns void language plpgsql as $$
declare n bigint;
begin
  execute statement;
  get diagnostics n = row_count;
  if n <> 0 then
    raise exception 'expected no row to change, % did: %', n, statement;
  end if;
  perform pg_temp.checked();
end $$;

create function pg_temp.expect_value(statement text, expected text) returns void language plpgsql as $$
declare got text;
begin
  execute statement into got;
  if got is distinct from expected then
    raise exception 'expected %, got %: %', expected, got, statement;
  end if;
  perform pg_temp.checked();
end $$;

create function pg_temp.sign_in(sub text) returns void language sql as $$
  select set_config('request.jwt.claims', json_build_object('sub', sub, 'role', 'authenticated')::text, false)
$$;
