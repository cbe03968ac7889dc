-- What tests/sql/rls.sql and tests/sql/agents.sql share, included by each (`\ir`): the
-- transaction they run in (rolled back at their end, leaving the data as it was), the
-- grants a new Supabase project gives — every table, sequence and function to anon and
-- authenticated, so what refuses in the checks is the policies and the functions' rules,
-- never a missing grant — two signed-in players, and the checks, each raising on failure.

begin;

grant all on all tables in schema public to anon, authenticated;
grant all on all sequences in schema public to anon, authenticated;
grant execute on all functions in schema public to anon, authenticated;

-- Two signed-in players: `auth-player` plays user 3, `auth-dotty` user 1.
update users set auth_id = 'auth-player' where id = 3;
update users set auth_id = 'auth-dotty' where id = 1;

create function pg_temp.expect_denied(statement text) returns void language plpgsql as $$
begin
  execute statement;
  raise exception 'expected this to be refused: %', statement;
exception
  when insufficient_privilege then null;
end $$;

-- `statement` fails with a message like `pattern`.
create function pg_temp.expect_refused(statement text, pattern text) returns void
  language plpgsql as $$
begin
  execute statement;
  raise exception 'expected this to be refused (%): %', pattern, statement;
exception
  when others then
    if sqlerrm like 'expected this to be refused%' or sqlerrm not like pattern then
      raise exception 'expected "%", got "%": %', pattern, sqlerrm, statement;
    end if;
end $$;

create function pg_temp.expect_count(statement text, expected bigint) returns void language plpgsql as $$
declare n bigint;
begin
  execute format('select count(*) from (%s) q', statement) into n;
  if n <> expected then
    raise exception 'expected % rows, got %: %', expected, n, statement;
  end if;
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
end $$;

create function pg_temp.expect_value(statement text, expected text) returns void language plpgsql as $$
declare got text;
begin
  execute statement into got;
  if got is distinct from expected then
    raise exception 'expected %, got %: %', expected, got, statement;
  end if;
end $$;

create function pg_temp.sign_in(sub text) returns void language sql as $$
  select set_config('request.jwt.claims', json_build_object('sub', sub, 'role', 'authenticated')::text, false)
$$;
