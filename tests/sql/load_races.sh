#!/usr/bin/env bash
# The world's own races (migrations/0015_world_under_load.sql), as parallel HTTP
# requests reach PostgREST: each in its own session under READ COMMITTED. A "holder"
# makes its request inside a transaction and keeps it open (pg_sleep) while the
# contenders make theirs; then each race checks what the database kept.
#   - last-gold: a player with 3 gold buys the 3-gold bread from two requests at once
#     (the market has no stock: a player's last coins are the scarce thing two of their
#     requests can race for) -> one loaf, one "Insufficient gold";
#   - same-energy: one agent with 60 energy strikes twice for 50 at once (battles have
#     no capacity: the agent's energy is what two joins race for) -> one blow, one
#     "Insufficient energy", the battle's count raised once;
#   - same-battle: five accounts' agents strike one battle at once -> every blow in the
#     battle's count exactly once;
#   - retry: the same request with the same ledger key, sent again while the first is
#     still running (a client retrying on a timeout), by a player and through act_as
#     -> the retry waits and answers the first result, applied once;
#   - each-other: two players message each other while each holds their own row (two
#     requests in one transaction, so the window is certain) -> both go through; under
#     0006-0014's FOR UPDATE this deadlocked (40P01).
# Each race also checks that every contender waited on a lock the holder held (else it
# was a sequence, not a race: tests/sql/races.sh). Then the cluster's log is read for
# "deadlock detected" after a marker this script wrote; a log that cannot be read fails.
#
#   FAMILIAR_PG_PORT=PORT tests/sql/load_races.sh [MIGRATIONS_DIR]
#
# Like tests/sql/abuse_concurrent.sh: its own database, dropped at the end.
set -euo pipefail
source "$(dirname "$0")/../../scripts/lib.sh"
source "$(dirname "$0")/races.sh"
cd "$ROOT"
port=${FAMILIAR_PG_PORT:?the port of the PostgreSQL that scripts/backend.sh started}
migrations=${1:-migrations}
db=familiar_load_race_$$
work=$(mktemp -d -t familiar-load-race.XXXXXX)
hold=2
failures=0

pg() { psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres "$@"; }
finish() {
  pg -d postgres -c "drop database if exists $db with (force)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap finish EXIT
fail() { printf 'FAILED: %s\n' "$*"; failures=$((failures + 1)); }
expect() {
  local got
  got=$(pg -At -d "$db" -c "$2")
  if [ "$got" = "$3" ]; then echo "ok: $1 ($got)"; else fail "$1: expected $3, got $got"; fi
}

pg -d postgres -c "create database $db"
for migration in "$migrations"/*.sql; do
  pg -d "$db" -f "$migration" >/dev/null
done
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
select race_new_account('race-' || n) from generate_series(1, 8) n;
insert into battles (id, community1_id, community2_id, status) overriding system value
  values (2, 1, 2, 'active'), (3, 1, 2, 'active');
-- race-1's player has 3 gold; race-2's Dotty 60 energy.
update users set gold = 3 where id = race_agent('race-1', 'player');
update users set energy = 60 where id = race_agent('race-2', 'dotty');
SQL
marker=$(log_marker)

# Runs SQL (stdin) in a new session signed in as `sub`, named `name`; its rows (one
# value a line) go to $work/NAME.out, its errors to $work/NAME.err.
session() {
  local name=$1 sub=$2
  { printf "set role authenticated;\nselect race_sign_in('%s') \\\\g /dev/null\n" "$sub"; cat; } |
    PGAPPNAME=$name psql -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres -d "$db" \
      >"$work/$name.out" 2>"$work/$name.err"
}

# Waits until session NAME sleeps inside its transaction.
held() {
  local name=$1 pid=$2 holding=
  for _ in $(seq 400); do
    holding=$(pg -At -d "$db" -c "select count(*) from pg_stat_activity
      where application_name = '$name' and state = 'active' and query like 'select pg_sleep%'")
    [ "$holding" = 1 ] && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  fail "$name never held its write open"
}

# race NAME SUB REFUSAL HOLDER_SQL CONTENDER_SQL...: the holder runs HOLDER_SQL and
# holds; then the contenders run theirs together. A contender may fail only with a
# message containing REFUSAL (none allowed when REFUSAL is empty).
race() {
  local name=$1 sub=$2 refusal=$3 holder=$4 i=0 pids=() pid refused=0
  shift 4
  { echo "begin;"; echo "$holder"; echo "select pg_sleep($hold) \\g /dev/null"; echo "commit;"; } |
    session "$name-holder" "$sub" &
  local holder_pid=$!
  held "$name-holder" "$holder_pid"
  for contender in "$@"; do
    i=$((i + 1))
    local who=${contender%%|*} sql=${contender#*|}
    echo "$sql" | session "$name-$i" "$who" &
    pids+=($!)
  done
  contenders_waited "$name" "$holder_pid" "$name-" "$#"
  wait "$holder_pid" || { cat "$work/$name-holder.err"; fail "$name: the holder failed"; }
  i=0
  for pid in "${pids[@]}"; do
    i=$((i + 1))
    if ! wait "$pid"; then
      refused=$((refused + 1))
      if [ -z "$refusal" ] || ! grep -qF "$refusal" "$work/$name-$i.err"; then
        cat "$work/$name-$i.err"; fail "$name: contender $i failed other than by '$refusal'"
      fi
    fi
  done
  echo "race $name: $refused of $# contenders refused"
}

# Two requests for the last 3 gold.
race last-gold race-1 'Insufficient gold. Need 3, have 0' \
  "select buy_item('bread', 1) ->> 'gold_left';" \
  "race-1|select buy_item('bread', 1);"
expect "race-1 bought one loaf" \
  "select quantity from inventory where user_id = race_agent('race-1', 'player') and item_name = 'bread'" 1
expect "race-1 has no gold left, and none below" \
  "select gold from users where id = race_agent('race-1', 'player')" 0

# Two blows for the same 60 energy.
race same-energy race-2 'Insufficient energy. Need 50, have 10' \
  "select act_as(race_agent('race-2', 'dotty'), 'join_battle', '{\"battle_id\": 2, \"energy\": 50}');" \
  "race-2|select act_as(race_agent('race-2', 'dotty'), 'join_battle', '{\"battle_id\": 2, \"energy\": 50}');"
expect "race-2's Dotty struck once, for 50" \
  "select e.energy || ' ' || b.community1_damage from users e, battles b where e.id = race_agent('race-2', 'dotty') and b.id = 2" "10 50"

# Five accounts strike battle 3 at once (race-3's Dotty holds, four Brannocs contend).
race same-battle race-3 '' \
  "select act_as(race_agent('race-3', 'dotty'), 'join_battle', '{\"battle_id\": 3, \"energy\": 7}');" \
  "race-4|select act_as(race_agent('race-4', 'brannoc'), 'join_battle', '{\"battle_id\": 3, \"energy\": 11}');" \
  "race-5|select act_as(race_agent('race-5', 'brannoc'), 'join_battle', '{\"battle_id\": 3, \"energy\": 11}');" \
  "race-6|select act_as(race_agent('race-6', 'brannoc'), 'join_battle', '{\"battle_id\": 3, \"energy\": 11}');" \
  "race-7|select act_as(race_agent('race-7', 'brannoc'), 'join_battle', '{\"battle_id\": 3, \"energy\": 11}');"
expect "battle 3 counts each blow once: 7 to side 1, 44 to side 2, as its fighters and the blows' log say" \
  "select b.community1_damage || ' ' || b.community2_damage || ' ' ||
          (select string_agg(s::text, ' ' order by side) from (select side, sum(damage_dealt) s from battle_participants where battle_id = 3 group by side) p) || ' ' ||
          (select string_agg(s::text, ' ' order by side) from (select side, sum(damage) s from battle_blows where battle_id = 3 group by side) l)
   from battles b where b.id = 3" "7 44 7 44 7 44"

# The same key again while the first request runs: a player's work, an agent's post.
race retry race-8 '' \
  "select do_work('farming', 'retry-work');" \
  "race-8|select do_work('farming', 'retry-work');" \
  "race-8|select do_work('farming', 'retry-work');"
for i in 1 2; do
  if cmp -s "$work/retry-holder.out" "$work/retry-$i.out"; then
    echo "ok: retry $i answered the first result ($(cat "$work/retry-$i.out"))"
  else
    fail "retry $i answered '$(cat "$work/retry-$i.out")', not the first result '$(cat "$work/retry-holder.out")'"
  fi
done
expect "race-8 worked once: 25 + 30 gold" "select gold from users where id = race_agent('race-8', 'player')" 55
race agent-retry race-8 '' \
  "select act_as(race_agent('race-8', 'mira'), 'create_post', '{\"content\": \"Once.\", \"community_id\": 2}', 'retry-post');" \
  "race-8|select act_as(race_agent('race-8', 'mira'), 'create_post', '{\"content\": \"Once.\", \"community_id\": 2}', 'retry-post');"
if cmp -s "$work/agent-retry-holder.out" "$work/agent-retry-1.out"; then
  echo "ok: the agent's retry answered the first result"
else
  fail "the agent's retry answered '$(cat "$work/agent-retry-1.out")', not '$(cat "$work/agent-retry-holder.out")'"
fi
expect "one post from race-8's Mira" "select count(*) from posts where author_id = race_agent('race-8', 'mira')" 1

# Each holds their own row, then messages the other.
a=$(pg -At -d "$db" -c "select race_agent('race-3', 'player')")
b=$(pg -At -d "$db" -c "select race_agent('race-4', 'player')")
pair() {
  local sub=$1 to=$2
  printf "begin;\nselect do_work('farming') \\\\g /dev/null\nselect pg_sleep(1) \\\\g /dev/null\nselect send_message(%s, 'Hello from %s') ->> 'id';\ncommit;\n" "$to" "$sub" |
    session "each-other-$sub" "$sub"
}
pair race-3 "$b" & first=$!
pair race-4 "$a" & second=$!
wait $first || { cat "$work/each-other-race-3.err"; fail "each-other: race-3's message failed"; }
wait $second || { cat "$work/each-other-race-4.err"; fail "each-other: race-4's message failed"; }
expect "both messages kept" "select count(*) from messages where content like 'Hello from race-%'" 2

no_deadlock_since "$marker"

[ "$failures" = 0 ] || die "$failures check(s) failed: racing requests were applied twice or waited on each other"
echo "the world's own races: all checks passed"
