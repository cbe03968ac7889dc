#!/usr/bin/env bash
# The shared world under load, from one command (issue 47):
#
#   bench/world_load/run.sh [PLAYERS=20] [SECONDS=20]
#
# Starts a throwaway backend of its own (scripts/backend.sh: PostgreSQL 15, postrust,
# the Supabase Auth stand-in; its own, since the players' writes commit), signs in
# PLAYERS players with their agents (players.mjs), makes the world one of established
# players (their memberships dated two days back, so 0013's newcomer caps are not all
# that answers; the per-account limits still hold), adds proposals and battles to
# spread the play, snapshots gold, bread and battles, and lets everyone play for
# SECONDS. Then it prints the players' table, checks the invariants in SQL
# (invariants.sql), reads the cluster's log for deadlocks, and shows the plan of the
# slowest look-up as a player's request runs it (RLS on). Fails on any broken
# invariant, deadlock, or request that failed other than by a rule's refusal.
set -euo pipefail
source "$(dirname "$0")/../../scripts/lib.sh"
cd "$ROOT"
players=${1:-20}
seconds=${2:-20}
here=bench/world_load
backend=$(mktemp -d -t familiar-load.XXXXXX)
work=$(mktemp -d -t familiar-load-work.XXXXXX)
trap 'scripts/backend.sh stop "$backend"; rm -rf "$work"' EXIT

scripts/backend.sh start "$backend"
source "$backend/env"
pg() { psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$FAMILIAR_PG_PORT" -U postgres -d postgres "$@"; }

node "$here/players.mjs" setup "$players" "$work/players.json"
pg <<'SQL'
update community_joins set joined_at = joined_at - interval '2 days';
insert into proposals (community_id, author_id, title) values
  (1, 1, 'Light the west road'), (2, 2, 'Fortify the hill'), (2, 2, 'Tax the tavern road');
insert into battles (community1_id, community2_id) values (1, 2), (1, 2);
create table bench_start as select now() as at, (select count(*) from votes) as votes;
create table bench_users as select id, gold from users;
create table bench_inventory as select user_id, item_name, quantity from inventory;
create table bench_battles as select id, community1_damage, community2_damage from battles;
create table bench_applied (owner text, key text, tool text);
SQL

node "$here/players.mjs" run "$work/players.json" "$seconds" "$work" | tee "$work/table.txt" || status=$?
pg -c "\\copy bench_applied from '$work/applied.csv' csv"
echo
pg -o /dev/null -f "$here/invariants.sql" 2>&1 | sed 's/^psql:[^ ]* NOTICE:  /  /'
[ -r "$backend/postgres.log" ] || die "the cluster's log $backend/postgres.log cannot be read: the deadlock check cannot run"
deadlocks=$(grep -c "deadlock detected" "$backend/postgres.log" || true)
echo "  deadlocks in the cluster's log: $deadlocks"

# The slowest look-up's plan, run as the first player (role authenticated, RLS on).
slowest=$(cat "$work/slowest.txt")
me=$(node -e "const p = require('$work/players.json')[0]; console.log(p.me)")
sub=$(node -e "const p = require('$work/players.json')[0]; console.log(p.sub)")
# The busiest conversation of the first player's account, for the history's plan.
read -r me other < <(pg -At -F ' ' -c "select m.sender_id, m.receiver_id from messages m
  where m.sender_id in (select account_users($me)) group by 1, 2 order by count(*) desc limit 1")
case "$slowest" in
  get_conversation_history) query="select id, sender_id, receiver_id, reply_to, content from messages where (sender_id = $me and receiver_id = $other) or (sender_id = $other and receiver_id = $me) order by id desc limit 10" ;;
  get_recent_posts) query="select id, author_id, community_id, content from posts where community_id = 1 order by id desc limit 5" ;;
  get_community_members) query="select m.loyalty, m.is_primary, u.id, u.username, u.morale from user_communities m join users u on u.id = m.user_id where m.community_id = 1 order by m.user_id" ;;
  search_memories) query="select content, importance from memories where user_id = $me and content ilike '%battle%' order by importance desc, id desc limit 5" ;;
  get_active_battles) query="select * from battles where (community1_id = 1 or community2_id = 1) and status = 'active' order by id desc" ;;
  get_my_inventory) query="select item_name, quantity from inventory where user_id = $me and quantity > 0 order by item_name" ;;
  get_market_items) query="select name, price, effects from market_items where available order by name" ;;
  *) query="select health, energy, gold, morale from users where id = $me" ;;
esac
echo
echo "the slowest look-up by p95, $slowest, as a player's request plans it:"
pg -At <<SQL
set role authenticated;
select set_config('request.jwt.claims', json_build_object('sub', '$sub', 'role', 'authenticated')::text, false) \\g /dev/null
explain (analyze, costs off, timing off, summary on) $query;
SQL

[ "${status:-0}" = 0 ] || die "requests failed other than by a rule (see the table)"
[ "$deadlocks" = 0 ] || die "$deadlocks deadlock(s) under load"
echo "world under load: $players players, $seconds s, every invariant held"
