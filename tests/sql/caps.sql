-- Caps per account whatever its age (migrations/0017_account_caps.sql), one request
-- after another, under the grants a new Supabase project gives. Each account here is a
-- day old and more (made, then dated two days back with its memberships, so 0013's
-- newcomer caps are not what answers), and plays as the audit of issue 56 played: with
-- seed 000's food on the market (10 gold for 50 energy), keyless work, buy and eat
-- calls (before: 25 gold into 12,025 in 900 calls), then its energy into battle
-- (before: 6,000 damage in seconds), and votes. Each cap refuses in its sentence and
-- the refused call changes nothing; another account still plays. An hour passing is
-- played by the superuser dating the account's capped calls back 61 minutes. Rolled
-- back; the transaction, grants and checks are tests/sql/preamble.sql.

\ir preamble.sql

-- The demo's market sells the seed's food (migrations/0022_seed_food.sql).
select pg_temp.expect_value('select price || ''/'' || (effects ->> ''energy'') from market_items where name = ''food''', '10/50');

create temp table accounts (sub text primary key, player bigint, dotty bigint, brannoc bigint, mira bigint);
grant all on accounts to anon, authenticated;
create function pg_temp.new_account(sub text) returns void language plpgsql as $$
declare me bigint; claimed jsonb;
begin
  perform pg_temp.sign_in(sub);
  me := (enter_world(sub) ->> 'id')::bigint;
  claimed := claim_agents();
  insert into accounts values (sub, me, (claimed -> 0 ->> 'agent_id')::bigint,
    (claimed -> 1 ->> 'agent_id')::bigint, (claimed -> 2 ->> 'agent_id')::bigint);
end $$;
create function pg_temp.agent(sub text, name text) returns bigint language sql as $$
  select case name when 'dotty' then dotty when 'brannoc' then brannoc when 'mira' then mira
                   else player end
  from accounts where accounts.sub = agent.sub
$$;
create function pg_temp.as_agent(sub text, name text, action text, args jsonb) returns jsonb
  language plpgsql as $$
begin
  perform pg_temp.sign_in(sub);
  return act_as(pg_temp.agent(sub, name), action, args);
end $$;

-- As the superuser: an hour passes for `sub`'s account's capped calls.
create function pg_temp.an_hour_passes_for(sub text) returns void language sql as $$
  update account_actions set done_at = done_at - interval '61 minutes'
  where account_id = (select player from accounts a where a.sub = an_hour_passes_for.sub)
$$;

-- `rounds` rounds of the farm as the signed-in player (mine, buy two meals, eat one:
-- a meal is always at hand, so eating meets its cap rather than an empty bag), each
-- call apart: how many of each went through, and the first refusal of each.
create function pg_temp.farm(rounds integer) returns jsonb language plpgsql as $$
declare done jsonb := '{"work": 0, "buy": 0, "eat": 0}'; said jsonb := '{}'; call text; i integer;
begin
  for i in 1..rounds loop
    foreach call in array array['work', 'buy', 'eat'] loop
      begin
        case call
          when 'work' then perform do_work('mining');
          when 'buy' then perform buy_item('food', 2);
          else perform consume_item('food', 1);
        end case;
        done := jsonb_set(done, array[call], to_jsonb((done ->> call)::integer + 1));
      exception when others then
        if not said ? call then said := said || jsonb_build_object(call, sqlerrm); end if;
      end;
    end loop;
  end loop;
  return done || jsonb_build_object('refused', said);
end $$;

-- `got` is like `pattern`.
create function pg_temp.expect_like(got text, pattern text) returns void language plpgsql as $$
begin
  if got is null or got not like pattern then
    raise exception 'expected "%", got "%"', pattern, got;
  end if;
  perform pg_temp.checked();
end $$;

set role authenticated;
select pg_temp.new_account('day-' || n) from generate_series(1, 5) n;
reset role;
update users set created_at = created_at - interval '2 days'
  where id in (select account_users(player) from accounts);
update community_joins set joined_at = joined_at - interval '2 days'
  where user_id in (select account_users(player) from accounts);

-- The farm. 300 rounds of work, buy and eat (900 calls) by day-1's player: 20 of each
-- go through in the hour, the rest are refused in the cap's sentence.
set role authenticated;
select pg_temp.sign_in('day-1');
select pg_temp.farm(300) as farm \gset
select pg_temp.expect_value(format('select %L::jsonb - ''refused''', :'farm'), '{"buy": 20, "eat": 20, "work": 20}');
select pg_temp.expect_like((:'farm'::jsonb -> 'refused' ->> 'work'), 'you and your agents may work at most 20 times an hour; try again after 2% UTC');
select pg_temp.expect_like((:'farm'::jsonb -> 'refused' ->> 'buy'), 'you and your agents may buy from the market at most 20 times an hour; try again after 2% UTC');
select pg_temp.expect_like((:'farm'::jsonb -> 'refused' ->> 'eat'), 'you and your agents may eat or drink at most 20 times an hour; try again after 2% UTC');
-- 25 gold, 20 minings (50 each), 40 meals (10 each): 625, not 12,025.
select pg_temp.expect_value('select gold::text from users where id = world_user()', '625');
-- A refused call changes nothing: gold and energy as they were.
select pg_temp.expect_value('select gold::text || ''/'' || energy::text from users where id = world_user()', '625/100');
select pg_temp.expect_refused('select do_work(''farming'')', 'you and your agents may work at most 20 times an hour%');
select pg_temp.expect_value('select gold::text || ''/'' || energy::text from users where id = world_user()', '625/100');
-- The account's agents share its caps; another account's do not.
select pg_temp.expect_refused('select pg_temp.as_agent(''day-1'', ''dotty'', ''do_work'', ''{"job": "farming"}'')', 'you and your agents may work at most 20 times an hour%');
select pg_temp.expect_refused('select pg_temp.as_agent(''day-1'', ''brannoc'', ''buy_item'', ''{"item_name": "food"}'')', 'you and your agents may buy from the market at most 20 times an hour%');
select pg_temp.expect_value('select pg_temp.as_agent(''day-2'', ''dotty'', ''do_work'', ''{"job": "farming"}'') ->> ''earned''', '30');
reset role;
-- A day: four more hours of the farm make 100 of each; the next hour's first call is
-- refused by the day's cap, until a day has passed since the first.
do $$ begin for i in 1..4 loop perform pg_temp.an_hour_passes_for('day-1'); end loop; end $$;
select pg_temp.an_hour_passes_for('day-1');
set role authenticated;
select pg_temp.sign_in('day-1');
select pg_temp.expect_value('select (pg_temp.farm(30) - ''refused'')::text', '{"buy": 20, "eat": 20, "work": 20}');
reset role;
select pg_temp.an_hour_passes_for('day-1');
set role authenticated;
select pg_temp.sign_in('day-1');
select pg_temp.expect_value('select (pg_temp.farm(30) - ''refused'')::text', '{"buy": 20, "eat": 20, "work": 20}');
reset role;
select pg_temp.an_hour_passes_for('day-1');
set role authenticated;
select pg_temp.sign_in('day-1');
select pg_temp.expect_value('select (pg_temp.farm(30) - ''refused'')::text', '{"buy": 20, "eat": 20, "work": 20}');
reset role;
select pg_temp.an_hour_passes_for('day-1');
set role authenticated;
select pg_temp.sign_in('day-1');
select pg_temp.expect_value('select (pg_temp.farm(30) - ''refused'')::text', '{"buy": 20, "eat": 20, "work": 20}');
reset role;
select pg_temp.an_hour_passes_for('day-1');
set role authenticated;
select pg_temp.sign_in('day-1');
select pg_temp.expect_refused('select do_work(''mining'')', 'you and your agents may work at most 100 times a day; try again after 2% UTC');
select pg_temp.expect_refused('select buy_item(''food'', 1)', 'you and your agents may buy from the market at most 100 times a day%');
select pg_temp.expect_refused('select consume_item(''food'', 1)', 'you and your agents may eat or drink at most 100 times a day%');
-- A day's farm: 25 + 100 x (50 - 20) gold.
select pg_temp.expect_value('select gold::text from users where id = world_user()', '3025');
reset role;
update account_actions set done_at = done_at - interval '1 day'
  where account_id = pg_temp.agent('day-1', 'player');
set role authenticated;
select pg_temp.sign_in('day-1');
select pg_temp.expect_value('select do_work(''mining'') ->> ''earned''', '50');
reset role;

-- Damage. day-2's four actors, established members, each with a full bar (the
-- superuser fills them, as the farm's meals would): 398 damage, then the player eats
-- and strikes 101 more (499). Dotty's 2 are refused with 1 left, energy kept, the
-- player's last 1 goes through, and the next is refused.
update users set energy = 100, gold = 100 where id in (select account_users(player) from accounts where sub = 'day-2');
insert into user_communities (user_id, community_id) select player, 1 from accounts where sub = 'day-2';
update community_joins set joined_at = joined_at - interval '2 days'
  where user_id = pg_temp.agent('day-2', 'player');
set role authenticated;
select pg_temp.expect_value(format('select pg_temp.as_agent(''day-2'', %L, ''join_battle'', %L) ->> ''damage''', n, jsonb_build_object('battle_id', 1, 'energy', e)), e::text)
  from (values ('player', 100), ('dotty', 98), ('brannoc', 100), ('mira', 100)) strikes(n, e);
select pg_temp.sign_in('day-2');
select buy_item('food', 3);
select consume_item('food', 2);
select pg_temp.expect_value('select join_battle(1, 100) ->> ''damage''', '100');
select consume_item('food', 1);
select pg_temp.expect_value('select join_battle(1, 1) ->> ''damage''', '1');
select pg_temp.expect_refused('select pg_temp.as_agent(''day-2'', ''dotty'', ''join_battle'', ''{"battle_id": 1, "energy": 2}'')',
  'you and your agents may deal at most 500 damage an hour, and 1 of it is left; more comes back after 2% UTC');
select pg_temp.expect_value(format('select energy::text from users where id = %s', pg_temp.agent('day-2', 'dotty')), '2');
select pg_temp.sign_in('day-2');
select pg_temp.expect_value('select join_battle(1, 1) ->> ''damage''', '1');
select pg_temp.expect_refused('select join_battle(1, 1)',
  'you and your agents may deal at most 500 damage an hour, and 0 of it is left; more comes back after 2% UTC');
select pg_temp.expect_value('select energy::text from users where id = world_user()', '48');
reset role;
-- Three more hours at 500 make the day's 2,000; the fifth hour's first blow is refused.
do $$
begin
  for i in 1..3 loop
    perform pg_temp.an_hour_passes_for('day-2');
    update users set energy = 100 where id in (select account_users(player) from accounts where sub = 'day-2');
    execute 'set role authenticated';
    perform pg_temp.as_agent('day-2', n, 'join_battle', '{"battle_id": 1, "energy": 100}')
      from unnest(array['player', 'dotty', 'brannoc', 'mira']) n;
    execute 'reset role';
    update users set energy = 100 where id = pg_temp.agent('day-2', 'player');
    execute 'set role authenticated';
    perform pg_temp.as_agent('day-2', 'player', 'join_battle', '{"battle_id": 1, "energy": 100}');
    execute 'reset role';
  end loop;
end $$;
select pg_temp.an_hour_passes_for('day-2');
update users set energy = 100 where id = pg_temp.agent('day-2', 'player');
select pg_temp.expect_value('select sum(amount)::text from account_actions where action = ''fight'' and account_id = pg_temp.agent(''day-2'', ''player'')', '2000');
set role authenticated;
select pg_temp.sign_in('day-2');
select pg_temp.expect_refused('select join_battle(1, 1)',
  'you and your agents may deal at most 2000 damage a day, and 0 of it is left; more comes back after 2% UTC');
reset role;

-- Blows: 60 an hour (0013's, here now) and 300 a day, of any size.
update users set energy = 100 where id in (select account_users(player) from accounts where sub = 'day-3');
set role authenticated;
select pg_temp.sign_in('day-3');
select pg_temp.as_agent('day-3', 'dotty', 'join_battle', '{"battle_id": 1, "energy": 1}') from generate_series(1, 60);
select pg_temp.expect_refused('select pg_temp.as_agent(''day-3'', ''mira'', ''join_battle'', ''{"battle_id": 1, "energy": 1}'')', 'you and your agents may fight at most 60 times an hour; try again after 2% UTC');
reset role;
do $$
begin
  for i in 1..4 loop
    perform pg_temp.an_hour_passes_for('day-3');
    update users set energy = 100 where id in (select account_users(player) from accounts where sub = 'day-3');
    execute 'set role authenticated';
    perform pg_temp.as_agent('day-3', 'dotty', 'join_battle', '{"battle_id": 1, "energy": 1}') from generate_series(1, 60);
    execute 'reset role';
  end loop;
end $$;
select pg_temp.an_hour_passes_for('day-3');
set role authenticated;
select pg_temp.expect_refused('select pg_temp.as_agent(''day-3'', ''brannoc'', ''join_battle'', ''{"battle_id": 1, "energy": 1}'')', 'you and your agents may fight at most 300 times a day; try again after 2% UTC');
reset role;

-- Votes: 20 an hour and 100 a day, one per proposal as 0013 has it; abstaining is not
-- voting. 120 open proposals in the Lantern Guild, where day-4's Dotty is established
-- (put there by the game, past the proposals' own caps: triggers off for the insert).
set session_replication_role = replica;
insert into proposals (community_id, author_id, title) select 1, 1, 'Motion ' || n from generate_series(1, 120) n;
set session_replication_role = origin;
create temp table motions as select id from proposals where title like 'Motion %' order by id;
grant select on motions to authenticated;
set role authenticated;
select pg_temp.as_agent('day-4', 'dotty', 'vote_on_proposal', jsonb_build_object('proposal_id', id, 'in_favour', true))
  from (select id from motions order by id limit 20) m;
select pg_temp.expect_refused(format('select pg_temp.as_agent(''day-4'', ''dotty'', ''vote_on_proposal'', ''{"proposal_id": %s, "in_favour": true}'')', (select id from motions order by id offset 20 limit 1)),
  'you and your agents may vote at most 20 times an hour; try again after 2% UTC');
select pg_temp.expect_value(format('select pg_temp.as_agent(''day-4'', ''dotty'', ''abstain_from_vote'', ''{"proposal_id": %s}'') ->> ''user_id''', (select id from motions order by id offset 21 limit 1)), pg_temp.agent('day-4', 'dotty')::text);
select pg_temp.expect_value(format('select pg_temp.as_agent(''day-5'', ''dotty'', ''vote_on_proposal'', ''{"proposal_id": %s, "in_favour": true}'') ->> ''in_favour''', (select id from motions order by id offset 20 limit 1)), 'true');
reset role;
do $$
begin
  for i in 1..4 loop
    perform pg_temp.an_hour_passes_for('day-4');
    execute 'set role authenticated';
    perform pg_temp.as_agent('day-4', 'dotty', 'vote_on_proposal', jsonb_build_object('proposal_id', id, 'in_favour', true))
      from (select id from motions order by id offset 2 + 20 * i limit 20) m;
    execute 'reset role';
  end loop;
end $$;
select pg_temp.an_hour_passes_for('day-4');
select pg_temp.expect_count(format('select * from votes where user_id = %s', pg_temp.agent('day-4', 'dotty')), 100);
set role authenticated;
select pg_temp.expect_refused(format('select pg_temp.as_agent(''day-4'', ''dotty'', ''vote_on_proposal'', ''{"proposal_id": %s, "in_favour": true}'')', (select max(id) from motions)),
  'you and your agents may vote at most 100 times a day; try again after 2% UTC');
reset role;

-- The caps are public; their log is the game's: no player reads or writes it.
set role authenticated;
select pg_temp.sign_in('day-5');
select pg_temp.expect_count('select * from account_caps', 5);
select pg_temp.expect_count('select * from account_actions', 0);
select pg_temp.expect_denied('insert into account_actions (account_id, user_id, action, amount, done_at) values (world_user(), world_user(), ''work'', -100, ''epoch'')');
select pg_temp.expect_no_change('delete from account_actions');
select pg_temp.expect_no_change('update account_caps set per_day = 100000');
reset role;
select pg_temp.expect_value('select per_day::text from account_caps where action = ''work''', '100');

select 'caps per account, a day old and more: all checks passed' as result;
select pg_temp.checks_passed('tests/sql/caps.sql') as result;
rollback;
