#!/usr/bin/env bash
# What anon and authenticated may call and write under the grants a new Supabase
# project gives (migrations/0019_closed_helpers.sql). Supabase grants every function,
# table and sequence in public to anon and authenticated as it is created (default
# privileges), so a `revoke … from public` leaves a helper callable there; the other
# SQL tests grant everything again on purpose and cannot see it. Here a database of
# its own is made with those default privileges, the migrations are applied, and:
#   - every function anon or authenticated may execute is the API or a function a
#     row-level policy calls (the list below), each named;
#   - a player cannot write a database action's result into their own ledger, nor
#     their agent's; the page's own records and its "outcome unknown" marker go in;
#   - an action called with a key another tool's record holds refuses it;
#   - of `users`, anon and authenticated read every column but `auth_id`
#     (migrations/0020_private_auth_id.sql): no one lists, filters or orders by
#     another's sign-in id, a player learns their own through `enter_world()` and
#     `world_user()`, and names, stats and leaderboards read as before.
#
#   FAMILIAR_PG_PORT=PORT tests/sql/grants.sh [MIGRATIONS_DIR]
set -euo pipefail
source "$(dirname "$0")/../../scripts/lib.sh"
cd "$ROOT"
port=${FAMILIAR_PG_PORT:?the port of the PostgreSQL that scripts/backend.sh started}
migrations=${1:-migrations}
db=familiar_grants_$$

pg() { psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres "$@"; }
trap 'pg -d postgres -c "drop database if exists $db with (force)" >/dev/null 2>&1 || true' EXIT

pg -d postgres -c "create database $db"
pg -d "$db" >/dev/null <<'SQL'
alter default privileges in schema public grant all on tables to anon, authenticated;
alter default privileges in schema public grant all on sequences to anon, authenticated;
alter default privileges in schema public grant all on functions to anon, authenticated;
SQL
for migration in "$migrations"/*.sql; do
  pg -d "$db" -f "$migration" >/dev/null
done

pg -d "$db" <<'SQL'
create function pg_temp.expect_value(statement text, expected text) returns void language plpgsql as $$
declare got text;
begin
  execute statement into got;
  if got is distinct from expected then
    raise exception 'expected %, got %: %', expected, got, statement;
  end if;
end $$;
create function pg_temp.expect_refused(statement text, pattern text) returns void language plpgsql as $$
begin
  execute statement;
  raise exception 'expected this to be refused (%): %', pattern, statement;
exception
  when others then
    if sqlerrm like 'expected this to be refused%' or sqlerrm not like pattern then
      raise exception 'expected "%", got "%": %', pattern, sqlerrm, statement;
    end if;
end $$;

-- Every function anon or authenticated may run, against what each should.
create temp table api (role text, fn text);
insert into api select 'authenticated', unnest(array[
  'abstain_from_vote(bigint,text)', 'act_as(bigint,text,jsonb,text,boolean)', 'agent_actions()',
  'auth_user_id()', 'buy_item(text,integer,text)', 'claim_agents()',
  'consume_item(text,integer,text)', 'create_post(text,bigint,text)',
  'create_proposal(bigint,text,text)', 'create_proposal(bigint,text,text,text)',
  'do_work(text,text)', 'enter_world(text)', 'guild_decide(bigint,boolean)', 'guild_open()',
  'guild_propose(jsonb)', 'guild_scry(bigint,jsonb,text)', 'guild_tick(integer)',
  'ignore_battle(bigint,text)', 'join_battle(bigint,integer,text)',
  'join_community(bigint,text)', 'leave_community(bigint,text)', 'owns_agent(bigint)',
  'owns_ledger(text)', 'reply_to_message(bigint,text,text)', 'send_message(bigint,text,text)',
  'set_standing_orders(bigint,jsonb)', 'unknown_outcome(jsonb)',
  'vote_on_proposal(bigint,boolean,text)', 'world_user()']);
insert into api values ('anon', 'auth_user_id()'), ('anon', 'world_user()');
create temp table callable as
  select r.role, replace(p.oid::regprocedure::text, ', ', ',') as fn, p.prosecdef
  from pg_proc p join pg_namespace n on n.oid = p.pronamespace,
       unnest(array['anon', 'authenticated']) r(role)
  where n.nspname = 'public' and has_function_privilege(r.role, p.oid, 'execute');
do $$
declare extra text; missing text;
begin
  select string_agg(c.role || ': ' || c.fn || case when c.prosecdef then ' (security definer)' else '' end, ', ')
    into extra from callable c where not exists (select 1 from api a where a.role = c.role and a.fn = c.fn);
  select string_agg(a.role || ': ' || a.fn, ', ') into missing
    from api a where not exists (select 1 from callable c where c.role = a.role and c.fn = a.fn);
  if extra is not null then
    raise exception 'callable but not API: %', extra;
  end if;
  if missing is not null then
    raise exception 'API that cannot be called: %', missing;
  end if;
  raise notice 'ok: % functions callable by anon or authenticated, all of them API or policy helpers', (select count(*) from callable);
end $$;

-- The ledger. The seeded player (3) owns Dotty (1).
update users set auth_id = 'auth-player' where id = 3;
set role authenticated;
select set_config('request.jwt.claims', '{"sub": "auth-player", "role": "authenticated"}', false);
select pg_temp.expect_refused('insert into applied_actions (user_id, key, tool, result) values (''auth-player'', ''forged'', ''do_work'', ''{"earned": 5000}'')', 'new row violates row-level security policy%');
select pg_temp.expect_refused('insert into applied_actions (user_id, key, tool, result) values (''agent:1'', ''forged'', ''buy_item'', ''{"cost": 0}'')', 'new row violates row-level security policy%');
select pg_temp.expect_refused('insert into applied_actions (user_id, key, tool, result) values (''auth-player'', ''forged'', ''do_work'', ''{"outcome": "unknown", "earned": 5000}'')', 'new row violates row-level security policy%');
-- The page's own records, and its marker for an action that timed out.
insert into applied_actions (user_id, key, tool, result) values ('auth-player', 'kept', 'remember', '{"id": 7}');
insert into applied_actions (user_id, key, tool, result)
  values ('agent:1', 'lost', 'do_work', '{"outcome": "unknown", "note": "an earlier attempt timed out and may have taken effect"}');
select pg_temp.expect_value('select act_as(1, ''do_work'', ''{"job": "farming"}'', ''lost'') ->> ''outcome''', 'unknown');
select pg_temp.expect_value('select gold::text from users where id = 1', '40');
-- A key another tool's record holds answers no action, and applies none.
select pg_temp.expect_refused('select do_work(''farming'', ''kept'')', 'the key kept is taken by a record of remember; call the action with a key of its own');
select pg_temp.expect_value('select gold::text from users where id = 3', '25');
select pg_temp.expect_value('select do_work(''farming'', ''fresh'') ->> ''earned''', '30');
reset role;

-- Helpers refused by name through the API's roles.
set role authenticated;
select pg_temp.expect_refused('select acting_user()', 'permission denied for function acting_user');
select pg_temp.expect_refused('select ledger_owner()', 'permission denied for function ledger_owner');
reset role;
set role anon;
select pg_temp.expect_refused('select owns_agent(1)', 'permission denied for function owns_agent');
reset role;

-- Users: every column readable but the sign-in id, and none writable.
select pg_temp.expect_value(format($q$select string_agg(c.column_name, ',' order by c.ordinal_position)
    from information_schema.columns c where c.table_schema = 'public' and c.table_name = 'users'
    and has_column_privilege(%L, 'public.users', c.column_name, 'select')$q$, r),
  'id,username,is_agent,health,energy,morale,gold,created_at')
  from unnest(array['anon', 'authenticated']) r;
select pg_temp.expect_value(format($q$select has_any_column_privilege(%L, 'public.users',
    'insert, update, references')::text$q$, r), 'false')
  from unnest(array['anon', 'authenticated']) r;
-- Neither role reads, filters or orders by anyone's `auth_id`, nor gets it with `*`;
-- both read the world's public face: a leaderboard of the agents by gold.
set role anon;
select set_config('request.jwt.claims', '{"role": "anon"}', false);
select pg_temp.expect_refused('select auth_id from users', 'permission denied for table users');
select pg_temp.expect_refused('select * from users', 'permission denied for table users');
select pg_temp.expect_refused('select id from users where auth_id = ''auth-player''', 'permission denied for table users');
select pg_temp.expect_refused('select username from users order by auth_id limit 1', 'permission denied for table users');
select pg_temp.expect_value('select string_agg(username, '','' order by gold desc, id) from users where is_agent', 'brannoc,dotty,mira');
select pg_temp.expect_value('select world_user()::text', null);
reset role;
set role authenticated;
select set_config('request.jwt.claims', '{"sub": "auth-player", "role": "authenticated"}', false);
select pg_temp.expect_refused('select auth_id from users', 'permission denied for table users');
select pg_temp.expect_refused('select * from users', 'permission denied for table users');
select pg_temp.expect_refused('select id from users where auth_id = ''auth-player''', 'permission denied for table users');
select pg_temp.expect_refused('select count(*) from users where auth_id is not null', 'permission denied for table users');
select pg_temp.expect_value('select string_agg(username, '','' order by gold desc, id) from users where is_agent', 'brannoc,dotty,mira');
-- A player's own: their row and sign-in id through `enter_world()`, their id through
-- `world_user()`, and their row's public columns by that id.
select pg_temp.expect_value('select enter_world() ->> ''auth_id''', 'auth-player');
select pg_temp.expect_value('select world_user()::text', '3');
select pg_temp.expect_value('select username || '' '' || gold from users where id = world_user()', 'player 55');
reset role;
SQL
echo "grants as Supabase gives them: all checks passed"
