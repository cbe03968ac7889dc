#!/usr/bin/env bash
# One person, many accounts, at the same moment (migrations/0013_abuse_limits.sql).
# tests/sql/abuse.sql plays each attack one request after another; here the requests
# race, as parallel HTTP requests reach PostgREST: each in its own session, under READ
# COMMITTED, where no request sees another's rows before they commit. A "holder"
# session makes its write inside a transaction and keeps it open (pg_sleep) while the
# other sessions make theirs, so a limit that inserts and counts without serializing
# lets every one of them through. The races:
#   - one account's two agents vote on one proposal (one vote per account);
#   - three fresh accounts cast a proposal's third newcomer vote (3 per proposal);
#   - four fresh accounts strike 80 each with 320 newcomer damage already dealt
#     (500 a day per side; `join_battle` already locked the battle's row, so this one
#     held before the limits took locks of their own too);
#   - a player and two of their agents post with 29 of the hour's 30 posts made;
#   - two agents of a player who struck 59 times this hour strike in two battles
#     (60 blows an hour per account);
#   - a day-old account's player and two agents work, strike and vote at once with
#     the hour's cap one call away (20 works, 500 damage, 20 votes an hour per
#     account, migrations/0017_account_caps.sql).
# Each race asserts what the database kept, that the holder's write went through, that
# every contender waited on a lock the holder held (else the requests ran one after
# another: tests/sql/races.sh), and that every contender that failed was refused by the
# limit's sentence; the cluster's log holds no deadlock.
#
#   FAMILIAR_PG_PORT=PORT tests/sql/abuse_concurrent.sh [MIGRATIONS_DIR]
#
# Runs against the cluster scripts/backend.sh started (roles anon, authenticated
# made): it creates a database of its own, applies MIGRATIONS_DIR/*.sql (default
# migrations/) with the grants a new Supabase project gives, races there and drops
# it, since the races commit and the other tests share the backend's database.
set -euo pipefail
source "$(dirname "$0")/../../scripts/lib.sh"
source "$(dirname "$0")/races.sh"
cd "$ROOT"
port=${FAMILIAR_PG_PORT:?the port of the PostgreSQL that scripts/backend.sh started}
migrations=${1:-migrations}
db=familiar_race_$$
work=$(mktemp -d -t familiar-race.XXXXXX)
# How long a holder keeps its transaction open once its write is made, in seconds.
hold=2
failures=0

pg() { psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres "$@"; }
finish() {
  pg -d postgres -c "drop database if exists $db with (force)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap finish EXIT

pg -d postgres -c "create database $db"
for migration in "$migrations"/*.sql; do
  pg -d "$db" -f "$migration" >/dev/null
done

# As tests/sql/preamble.sql: every grant a new Supabase project gives, so what refuses
# is the limits. Ten fresh accounts, each with the three agents it claims; a second
# proposal in the Lantern Guild (proposal 1 is the seed's); battles 2 and 3 between
# the guilds.
pg -d "$db" >/dev/null <<'SQL'
grant all on all tables in schema public to anon, authenticated;
grant all on all sequences in schema public to anon, authenticated;
grant execute on all functions in schema public to anon, authenticated;
create table race_accounts (sub text primary key, player bigint, dotty bigint, brannoc bigint, mira bigint);
create function race_sign_in(sub text) returns void language sql as $$
  select set_config('request.jwt.claims', json_build_object('sub', sub, 'role', 'authenticated')::text, false)
$$;
create function race_new_account(sub text) returns void language plpgsql as $$
declare me bigint; claimed jsonb;
begin
  perform race_sign_in(sub);
  me := (enter_world(sub) ->> 'id')::bigint;
  claimed := claim_agents();
  insert into race_accounts values (sub, me, (claimed -> 0 ->> 'agent_id')::bigint,
    (claimed -> 1 ->> 'agent_id')::bigint, (claimed -> 2 ->> 'agent_id')::bigint);
end $$;
create function race_agent(sub text, name text) returns bigint language sql as $$
  select case name when 'dotty' then dotty when 'brannoc' then brannoc when 'mira' then mira
                   else player end
  from race_accounts a where a.sub = race_agent.sub
$$;
grant select on race_accounts to authenticated;
grant execute on function race_sign_in(text), race_agent(text, text) to authenticated;
select race_new_account('race-' || n) from generate_series(1, 10) n;
insert into proposals (id, community_id, author_id, title) overriding system value
  values (2, 1, 1, 'Race to the vote');
insert into battles (id, community1_id, community2_id, status) overriding system value
  values (2, 1, 2, 'active'), (3, 1, 2, 'active');
SQL

# Runs SQL (stdin) in a new session signed in as `sub`, named `name` in pg_stat_activity.
session() {
  local name=$1 sub=$2
  { printf "set role authenticated;\nselect race_sign_in('%s');\n" "$sub"; cat; } |
    PGAPPNAME=$name psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres -d "$db" >/dev/null
}

# `sub`'s agent (or player) `name` runs `action` with `args`, as act_as does for an owner.
act() {
  local name=$2 action=$3 args=$4
  if [ "$name" = player ]; then
    printf "select %s;\n" "$action"
  else
    printf "select act_as(race_agent('%s', '%s'), '%s', '%s');\n" "$1" "$name" "$action" "$args"
  fi
}

# race NAME REFUSAL HOLDER CONTENDER...: each of HOLDER and CONTENDER is "SUB WHO
# ACTION ARGS" (a player's ACTION is the call itself). The holder writes and holds its
# transaction open; once it sleeps, the contenders start together and write. A
# contender may fail only with a message containing REFUSAL.
race() {
  local name=$1 refusal=$2 holder=$3 i=0 pids=() sub who action args
  shift 3
  read -r sub who action args <<<"$holder"
  { echo "begin;"; act "$sub" "$who" "$action" "$args"; echo "select pg_sleep($hold);"; echo "commit;"; } |
    session "race-$name-holder" "$sub" 2>"$work/$name.holder" &
  local holder_pid=$! holding=
  for _ in $(seq 400); do
    holding=$(pg -At -d "$db" -c "select count(*) from pg_stat_activity
      where application_name = 'race-$name-holder' and state = 'active'
        and query like 'select pg_sleep%'")
    [ "$holding" = 1 ] && break
    kill -0 "$holder_pid" 2>/dev/null || break
    sleep 0.05
  done
  [ "$holding" = 1 ] || fail "$name: the holder never held its write open"
  for contender in "$@"; do
    i=$((i + 1))
    read -r sub who action args <<<"$contender"
    act "$sub" "$who" "$action" "$args" | session "race-$name-$i" "$sub" 2>"$work/$name.$i" &
    pids+=($!)
  done
  contenders_waited "$name" "$holder_pid" "race-$name-" "$#"
  local refused=0 pid held="the holder wrote"
  wait "$holder_pid" ||
    { cat "$work/$name.holder"; fail "$name: the holder's write failed"; held="the holder failed"; }
  i=0
  for pid in "${pids[@]}"; do
    i=$((i + 1))
    if ! wait "$pid"; then
      refused=$((refused + 1))
      grep -qF "$refusal" "$work/$name.$i" ||
        { cat "$work/$name.$i"; fail "$name: contender $i failed other than by the limit"; }
    fi
  done
  echo "race $name: $held; $refused of $# contenders refused by the limit"
}

fail() { printf 'FAILED: %s\n' "$*"; failures=$((failures + 1)); }

# expect WHAT SQL WANT: the superuser's answer to SQL is WANT.
expect() {
  local got
  got=$(pg -At -d "$db" -c "$2")
  if [ "$got" = "$3" ]; then echo "ok: $1 ($got)"; else fail "$1: expected $3, got $got"; fi
}

marker=$(log_marker)

# Before the races, as the players' own earlier requests, one after another: two
# newcomers' votes on proposal 2, 320 newcomer damage to the Lantern Guild's side of
# battle 1, race-1's 29 posts, race-10's 59 blows in battle 2.
pg -d "$db" >/dev/null <<'SQL'
select race_sign_in(sub), act_as(race_agent(sub, 'dotty'), 'vote_on_proposal', '{"proposal_id": 2, "in_favour": true}')
  from unnest(array['race-2', 'race-3']) sub;
select race_sign_in(sub), act_as(race_agent(sub, 'dotty'), 'join_battle', '{"battle_id": 1, "energy": 80}')
  from unnest(array['race-2', 'race-3', 'race-4', 'race-5']) sub;
select race_sign_in('race-1');
select create_post('Post ' || n) from generate_series(1, 29) n;
select race_sign_in('race-10');
select join_community(1);
select join_battle(2, 1) from generate_series(1, 59) n;
SQL

race vote 'you and your agents share one vote' \
  "race-1 dotty vote_on_proposal {\"proposal_id\":1,\"in_favour\":true}" \
  "race-1 mira vote_on_proposal {\"proposal_id\":1,\"in_favour\":false}"
expect "one vote for race-1's account on proposal 1" \
  "select count(*) from votes where proposal_id = 1 and user_id in (select account_users(race_agent('race-1', 'player')))" 1

race newcomer-votes 'already counts the votes of 3 members of less than a day' \
  "race-4 dotty vote_on_proposal {\"proposal_id\":2,\"in_favour\":true}" \
  "race-5 dotty vote_on_proposal {\"proposal_id\":2,\"in_favour\":true}" \
  "race-6 dotty vote_on_proposal {\"proposal_id\":2,\"in_favour\":true}"
expect "three newcomers' votes on proposal 2" "select count(*) from votes where proposal_id = 2" 3

race damage 'may deal at most 500 damage a day together in battle 1' \
  "race-6 dotty join_battle {\"battle_id\":1,\"energy\":80}" \
  "race-7 dotty join_battle {\"battle_id\":1,\"energy\":80}" \
  "race-8 dotty join_battle {\"battle_id\":1,\"energy\":80}" \
  "race-9 dotty join_battle {\"battle_id\":1,\"energy\":80}"
expect "newcomer damage to side 1 of battle 1 within 500, all of it in the battle's count" \
  "select (sum(b.damage) <= 500 and sum(b.damage) = max(t.community1_damage) - 120)::text
   from battle_blows b, battles t where b.battle_id = 1 and b.side = 1 and b.newcomer and t.id = 1" true

race posts 'you and your agents may make at most 30 posts an hour' \
  "race-1 player create_post('Thirtieth.')" \
  "race-1 dotty create_post {\"content\":\"The 31st.\",\"community_id\":1}" \
  "race-1 mira create_post {\"content\":\"The 32nd.\",\"community_id\":1}"
expect "30 posts for race-1's account this hour" \
  "select count(*) from posts where author_id in (select account_users(race_agent('race-1', 'player')))" 30

race blows 'you and your agents may fight at most 60 times an hour' \
  "race-10 dotty join_battle {\"battle_id\":3,\"energy\":1}" \
  "race-10 mira join_battle {\"battle_id\":2,\"energy\":1}"
expect "60 blows for race-10's account this hour" \
  "select count(*) from battle_blows where account_id = race_agent('race-10', 'player')" 60

# Caps per account whatever its age (migrations/0017_account_caps.sql): three accounts
# made two days ago, established members; the hour's earlier calls are rows the
# superuser dates ten minutes back (19 works, 450 damage in 9 blows, 19 votes), then
# the account's last call of the hour races its agents' (20 works, 500 damage and 20
# votes an hour per account). Proposals 3 and 4 in the Ashen Circle for the votes.
pg -d "$db" >/dev/null <<'SQL'
select race_new_account('race-' || n) from generate_series(11, 13) n;
update users set created_at = created_at - interval '2 days'
  where id in (select account_users(player) from race_accounts where sub in ('race-11', 'race-12', 'race-13'));
update community_joins set joined_at = joined_at - interval '2 days'
  where user_id in (select account_users(player) from race_accounts where sub in ('race-11', 'race-12', 'race-13'));
insert into proposals (id, community_id, author_id, title) overriding system value
  values (3, 2, 2, 'Race on the hill'), (4, 2, 2, 'Race down the hill');
insert into account_actions (account_id, user_id, action, amount, done_at)
  select a.player, a.player, c.action, c.amount, now() - interval '10 minutes'
  from race_accounts a, (values ('race-11', 'work', 1, 19), ('race-12', 'fight', 50, 9), ('race-13', 'vote', 1, 19)) c(sub, action, amount, n),
       generate_series(1, c.n)
  where a.sub = c.sub;
SQL

race work 'you and your agents may work at most 20 times an hour' \
  "race-11 player do_work('farming')" \
  "race-11 dotty do_work {\"job\":\"farming\"}" \
  "race-11 mira do_work {\"job\":\"farming\"}"
expect "20 works for race-11's account this hour" \
  "select count(*) from account_actions where action = 'work' and account_id = race_agent('race-11', 'player')" 20

race account-damage 'you and your agents may deal at most 500 damage an hour' \
  "race-12 dotty join_battle {\"battle_id\":3,\"energy\":40}" \
  "race-12 brannoc join_battle {\"battle_id\":3,\"energy\":40}" \
  "race-12 mira join_battle {\"battle_id\":3,\"energy\":40}"
expect "race-12's account within 500 damage this hour, all of it in the battle's blows" \
  "select (sum(a.amount) <= 500 and sum(a.amount) - 450 = (select sum(b.damage) from battle_blows b where b.account_id = race_agent('race-12', 'player')))::text
   from account_actions a where a.action = 'fight' and a.account_id = race_agent('race-12', 'player')" true

race account-votes 'you and your agents may vote at most 20 times an hour' \
  "race-13 dotty vote_on_proposal {\"proposal_id\":1,\"in_favour\":true}" \
  "race-13 brannoc vote_on_proposal {\"proposal_id\":3,\"in_favour\":true}" \
  "race-13 mira vote_on_proposal {\"proposal_id\":4,\"in_favour\":true}"
expect "20 votes for race-13's account this hour, one of them in the votes" \
  "select count(*) filter (where a.action = 'vote')::text || '/' || (select count(*) from votes v where v.user_id in (select account_users(race_agent('race-13', 'player'))))
   from account_actions a where a.account_id = race_agent('race-13', 'player')" 20/1

no_deadlock_since "$marker"

[ "$failures" = 0 ] || die "$failures check(s) failed: a limit let racing requests through"
echo "one person, many accounts, at the same moment: all checks passed"
