-- One person, many accounts (migrations/0013_abuse_limits.sql), asserted against the
-- real database under the grants a new Supabase project gives. Each attack is played
-- as Supabase's one-click anonymous accounts would play it, each account with the three
-- agents it claims: multiplying votes through agents and through accounts, multiplying
-- battle damage, flooding writes, hopping between communities, writing the limits' own
-- records, and forging the guild oracle's forecasts. Each is refused in a sentence; a
-- new player's ordinary day, and established members, still play. Time passing is
-- played by dating rows back, as the superuser. Rolled back; the transaction, the
-- grants, the two players and the checks are tests/sql/preamble.sql.

\ir preamble.sql

-- The accounts of this test: sign-in, world user and the claimed copies of Dotty (in
-- the Lantern Guild, side 1 of battle 1), Brannoc (Ashen Circle, side 2) and Mira
-- (both; she fights for the Ashen Circle).
create temp table accounts (sub text primary key, player bigint, dotty bigint, brannoc bigint, mira bigint);
grant all on accounts to anon, authenticated;

-- Signs in as `sub`, enters the world and claims the agents; a new account each time.
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

-- `action` with `args` as `sub`'s agent `name`.
create function pg_temp.as_agent(sub text, name text, action text, args jsonb) returns jsonb
  language plpgsql as $$
begin
  perform pg_temp.sign_in(sub);
  return act_as(pg_temp.agent(sub, name), action, args);
end $$;

-- As the superuser: `sub`'s account's memberships, as if a day and more had passed.
create function pg_temp.a_day_passes_for(sub text) returns void language plpgsql as $$
begin
  update community_joins set joined_at = joined_at - interval '2 days'
  where user_id in (select account_users(player) from accounts a where a.sub = a_day_passes_for.sub);
end $$;

set role authenticated;
select pg_temp.new_account('anon-' || n) from generate_series(1, 8) n;
reset role;

-- A new player's first day, as the conformance suite plays it: join, fight, propose,
-- vote, post, message, leave. None of it meets a limit.
set role authenticated;
select pg_temp.sign_in('anon-1');
select pg_temp.expect_value('select join_community(1) ->> ''joined''', '{"id": 1, "name": "Lantern Guild"}');
select pg_temp.expect_value('select join_battle(1, 10) ->> ''damage''', '10');
select (create_proposal(1, 'More lanterns') ->> 'id') as lanterns \gset
select pg_temp.expect_value(format('select vote_on_proposal(%s, true) ->> ''in_favour''', :lanterns), 'true');
select pg_temp.expect_value('select create_post(''Lanterns lit.'', 1) ->> ''content''', 'Lanterns lit.');
select pg_temp.expect_value('select send_message(1, ''A pint, please.'') ->> ''content''', 'A pint, please.');
select pg_temp.expect_value('select leave_community(1) ->> ''left''', '1');
select pg_temp.expect_value('select join_community(1) ->> ''joined''', '{"id": 1, "name": "Lantern Guild"}');
reset role;

-- Votes. A player and their agents are one account with one vote: anon-1 voted on
-- its own proposal, so its Dotty cannot; on the seed's proposal 1 its Dotty votes and
-- its Mira cannot (before: four votes from one click).
set role authenticated;
select pg_temp.expect_refused(format('select pg_temp.as_agent(''anon-1'', ''dotty'', ''vote_on_proposal'', ''{"proposal_id": %s, "in_favour": true}'')', :lanterns),
  'you and your agents share one vote, and your account has voted on proposal ' || :lanterns || ' already');
select pg_temp.expect_value('select pg_temp.as_agent(''anon-1'', ''dotty'', ''vote_on_proposal'', ''{"proposal_id": 1, "in_favour": false}'') ->> ''in_favour''', 'false');
select pg_temp.expect_refused('select pg_temp.as_agent(''anon-1'', ''mira'', ''vote_on_proposal'', ''{"proposal_id": 1, "in_favour": false}'')',
  'you and your agents share one vote, and your account has voted on proposal 1 already');
select pg_temp.expect_refused('select vote_on_proposal(1, false)', 'you and your agents share one vote%');
-- Abstaining adds nothing to either side: still one each.
select pg_temp.expect_value('select pg_temp.as_agent(''anon-1'', ''mira'', ''abstain_from_vote'', ''{"proposal_id": 1}'') ->> ''proposal_id''', '1');
-- Fresh accounts: their members of less than a day add at most 3 votes to a proposal,
-- however many accounts they come from (before: one more vote per click).
select pg_temp.expect_value('select pg_temp.as_agent(''anon-2'', ''dotty'', ''vote_on_proposal'', ''{"proposal_id": 1, "in_favour": false}'') ->> ''user_id''', pg_temp.agent('anon-2', 'dotty')::text);
select pg_temp.expect_value('select pg_temp.as_agent(''anon-3'', ''mira'', ''vote_on_proposal'', ''{"proposal_id": 1, "in_favour": false}'') ->> ''user_id''', pg_temp.agent('anon-3', 'mira')::text);
select pg_temp.expect_refused('select pg_temp.as_agent(''anon-4'', ''dotty'', ''vote_on_proposal'', ''{"proposal_id": 1, "in_favour": false}'')',
  'proposal 1 already counts the votes of 3 members of less than a day, the most it takes; you may vote on it once you have been a member for a day, after 2% UTC');
select pg_temp.sign_in('anon-5');
select pg_temp.expect_value('select join_community(1) ->> ''joined''', '{"id": 1, "name": "Lantern Guild"}');
select pg_temp.expect_refused('select vote_on_proposal(1, false)', 'proposal 1 already counts the votes of 3 members of less than a day%');
select pg_temp.expect_count('select * from votes where proposal_id = 1', 4);  -- the seed's and three
reset role;
-- A day later anon-4's Dotty is an established member, and her vote counts.
select pg_temp.a_day_passes_for('anon-4');
set role authenticated;
select pg_temp.expect_value('select pg_temp.as_agent(''anon-4'', ''dotty'', ''vote_on_proposal'', ''{"proposal_id": 1, "in_favour": false}'') ->> ''in_favour''', 'false');
select pg_temp.expect_count('select * from votes where proposal_id = 1', 5);
reset role;

-- Damage. Newcomers to the Lantern Guild (members of less than a day) deal at most
-- 500 damage a day together to its side of battle 1, however many accounts they come
-- from (before: 80 more per click, without end). anon-1's 10, three fresh Dottys' 80
-- each, anon-5's and anon-6's 100 make 450.
create temp table damage_before as select community1_damage, community2_damage from battles where id = 1;
grant all on damage_before to authenticated;
set role authenticated;
select pg_temp.expect_value(format('select pg_temp.as_agent(''anon-%s'', ''dotty'', ''join_battle'', ''{"battle_id": 1, "energy": 80}'') ->> ''damage''', n), '80')
  from generate_series(1, 3) n;
select pg_temp.sign_in('anon-5');
select pg_temp.expect_value('select join_battle(1, 100) ->> ''damage''', '100');
select pg_temp.sign_in('anon-6');
select pg_temp.expect_value('select join_community(1) ->> ''joined''', '{"id": 1, "name": "Lantern Guild"}');
select pg_temp.expect_value('select join_battle(1, 100) ->> ''damage''', '100');
select pg_temp.sign_in('anon-7');
select pg_temp.expect_value('select join_community(1) ->> ''joined''', '{"id": 1, "name": "Lantern Guild"}');
select pg_temp.expect_refused('select join_battle(1, 100)',
  'members of Lantern Guild for less than a day may deal at most 500 damage a day together in battle 1, and 50 of it is left; you fight without this limit once you have been a member for a day, after 2% UTC');
select pg_temp.expect_value('select energy::text from users where id = world_user()', '100');  -- nothing spent
select pg_temp.expect_value('select join_battle(1, 50) ->> ''damage''', '50');
select pg_temp.expect_refused('select join_battle(1, 1)', 'members of Lantern Guild for less than a day may deal at most 500 damage a day together in battle 1, and 0 of it is left%');
select pg_temp.expect_refused('select pg_temp.as_agent(''anon-8'', ''dotty'', ''join_battle'', ''{"battle_id": 1, "energy": 1}'')', '%and 0 of it is left%');
-- The other side's newcomers have their own 500; established members fight freely:
-- anon-4's Dotty (a day a member) and the seed's player.
select pg_temp.expect_value('select pg_temp.as_agent(''anon-2'', ''brannoc'', ''join_battle'', ''{"battle_id": 1, "energy": 60}'') ->> ''side''', '2');
select pg_temp.expect_value('select pg_temp.as_agent(''anon-4'', ''dotty'', ''join_battle'', ''{"battle_id": 1, "energy": 80}'') ->> ''damage''', '80');
select pg_temp.sign_in('auth-player');
select pg_temp.expect_value('select join_battle(1, 30) ->> ''damage''', '30');
reset role;
select pg_temp.expect_value('select (b.community1_damage - d.community1_damage)::text || ''/'' || (b.community2_damage - d.community2_damage)::text from battles b, damage_before d where b.id = 1', '600/60');
-- A day later anon-7 fights at full strength.
select pg_temp.a_day_passes_for('anon-7');
set role authenticated;
select pg_temp.sign_in('anon-7');
select pg_temp.expect_value('select join_battle(1, 50) ->> ''energy_left''', '0');
-- Sixty blows an hour per account: the seed's player, with 70 energy, strikes 59 more
-- times (60 in all) and is refused the sixty-first, energy kept.
select pg_temp.sign_in('auth-player');
do $$ begin for i in 1..59 loop perform join_battle(1, 1); end loop; end $$;
select pg_temp.expect_refused('select join_battle(1, 1)', 'you and your agents may fight at most 60 times an hour; try again after 2% UTC');
select pg_temp.expect_refused('select act_as(1, ''join_battle'', ''{"battle_id": 1, "energy": 1}'')', 'you and your agents may fight at most 60 times an hour%');
select pg_temp.expect_value('select energy::text from users where id = 3', '11');
reset role;

-- Floods. Thirty posts an hour per account, its agents' included; another account
-- still posts, and an hour later so does the first.
set role authenticated;
select pg_temp.sign_in('anon-2');
do $$ begin for i in 1..30 loop perform create_post('Post ' || i); end loop; end $$;
select pg_temp.expect_refused('select create_post(''Post 31'')', 'you and your agents may make at most 30 posts an hour; try again after 2% UTC');
select pg_temp.expect_refused('select pg_temp.as_agent(''anon-2'', ''dotty'', ''create_post'', ''{"content": "Post 31", "community_id": 1}'')', 'you and your agents may make at most 30 posts an hour%');
select pg_temp.expect_value('select pg_temp.as_agent(''anon-3'', ''dotty'', ''create_post'', ''{"content": "Mine.", "community_id": 1}'') ->> ''content''', 'Mine.');
reset role;
update posts set created_at = created_at - interval '61 minutes'
  where author_id in (select account_users(player) from accounts where sub = 'anon-2');
set role authenticated;
select pg_temp.sign_in('anon-2');
select pg_temp.expect_value('select create_post(''An hour later.'') ->> ''content''', 'An hour later.');
-- Sixty messages an hour, replies included.
do $$ begin for i in 1..59 loop perform send_message(1, 'Hello ' || i); end loop; end $$;
select pg_temp.expect_value('select reply_to_message((select max(id) from messages where sender_id = world_user()), ''And again.'') ->> ''reply_to'' is not null', 'true');
select pg_temp.expect_refused('select send_message(1, ''One more.'')', 'you and your agents may make at most 60 messages an hour%');
select pg_temp.expect_refused('select pg_temp.as_agent(''anon-2'', ''mira'', ''send_message'', ''{"user_id": 1, "content": "One more."}'')', 'you and your agents may make at most 60 messages an hour%');
-- Ten proposals an hour.
do $$ begin for i in 1..10 loop perform act_as(pg_temp.agent('anon-2', 'dotty'), 'create_proposal', jsonb_build_object('community_id', 1, 'title', 'Plan ' || i)); end loop; end $$;
select pg_temp.expect_refused('select pg_temp.as_agent(''anon-2'', ''dotty'', ''create_proposal'', ''{"community_id": 1, "title": "Plan 11"}'')', 'you and your agents may make at most 10 proposals an hour%');
-- Straight into the player's own rows: 120 memories, 600 ledger records and 60
-- character transactions an hour.
insert into memories (user_id, content) select world_user(), 'Memory ' || n from generate_series(1, 120) n;
select pg_temp.expect_refused('insert into memories (user_id, content) values (world_user(), ''One more.'')', 'you and your agents may make at most 120 memories an hour%');
insert into applied_actions (user_id, key, tool, result) select 'anon-2', 'key-' || n, 'remember', '{}' from generate_series(1, 600) n;
select pg_temp.expect_refused('insert into applied_actions (user_id, key, tool, result) values (''anon-2'', ''key-601'', ''remember'', ''{}'')', 'you may make at most 600 ledger records an hour%');
do $$ begin
  for i in 1..60 loop
    insert into transactions (user_id, character, transaction_type, state) values ('anon-2', 'dotty', 'drink_order', 'awaiting_payment');
    update transactions set status = 'completed' where user_id = 'anon-2' and status = 'pending';
  end loop;
end $$;
select pg_temp.expect_refused('insert into transactions (user_id, character, transaction_type, state) values (''anon-2'', ''dotty'', ''drink_order'', ''x'')', 'you may make at most 60 character transactions an hour%');
reset role;

-- Joins: three a day per user. anon-8 hops between the two communities (before:
-- at will); its Mira, a member of both by her claim, has joined twice already.
set role authenticated;
select pg_temp.sign_in('anon-8');
select pg_temp.expect_value('select join_community(1) ->> ''joined'' is not null', 'true');
select pg_temp.expect_value('select leave_community(1) ->> ''left''', '1');
select pg_temp.expect_value('select join_community(2) ->> ''joined'' is not null', 'true');
select pg_temp.expect_value('select leave_community(2) ->> ''left''', '2');
select pg_temp.expect_value('select join_community(1) ->> ''joined'' is not null', 'true');
select pg_temp.expect_value('select leave_community(1) ->> ''left''', '1');
select pg_temp.expect_refused('select join_community(2)', 'you may join at most 3 communities a day; try again after 2% UTC');
select pg_temp.expect_value('select pg_temp.as_agent(''anon-8'', ''mira'', ''leave_community'', ''{"community_id": 1}'') ->> ''left''', '1');
select pg_temp.expect_value('select pg_temp.as_agent(''anon-8'', ''mira'', ''join_community'', ''{"community_id": 1}'') ->> ''joined'' is not null', 'true');
select pg_temp.expect_value('select pg_temp.as_agent(''anon-8'', ''mira'', ''leave_community'', ''{"community_id": 1}'') ->> ''left''', '1');
select pg_temp.expect_refused('select pg_temp.as_agent(''anon-8'', ''mira'', ''join_community'', ''{"community_id": 1}'')', 'you may join at most 3 communities a day%');
-- Leaving and joining again makes anon-4's established Dotty a newcomer again.
reset role;
select pg_temp.expect_value(format('select established(%s, 1)::text', pg_temp.agent('anon-4', 'dotty')), 'true');
set role authenticated;
select pg_temp.as_agent('anon-4', 'dotty', 'leave_community', '{"community_id": 1}');
select pg_temp.as_agent('anon-4', 'dotty', 'join_community', '{"community_id": 1}');
reset role;
select pg_temp.expect_value(format('select established(%s, 1)::text', pg_temp.agent('anon-4', 'dotty')), 'false');

-- The limits' records are the game's: no player reads, writes, backdates or clears them.
set role authenticated;
select pg_temp.sign_in('anon-6');
select pg_temp.expect_count('select * from community_joins', 0);
select pg_temp.expect_count('select * from battle_blows', 0);
select pg_temp.expect_count('select * from newcomer_votes', 0);
select pg_temp.expect_denied('insert into community_joins (user_id, community_id, joined_at) values (world_user(), 1, ''epoch'')');
select pg_temp.expect_no_change('update community_joins set joined_at = ''epoch''');
select pg_temp.expect_no_change('delete from battle_blows');
select pg_temp.expect_no_change('delete from newcomer_votes');
select pg_temp.expect_denied('insert into battle_blows (battle_id, side, user_id, account_id, damage, newcomer) values (1, 1, world_user(), world_user(), -1000, true)');
reset role;
select pg_temp.expect_value('select count(*)::text from battle_blows where damage < 0', '0');

-- The guild oracle's forecast is never rosier than the council's draft (before: any
-- delta the page sent, 1000 food for a 30-food hunt, applied at the next tick).
set role authenticated;
select pg_temp.sign_in('anon-1');
select pg_temp.expect_value('select guild_open() ->> ''food''', '80');
select (guild_propose('[{"title": "Hunt", "description": "In the marsh.", "predicted_delta": {"food": 30, "gold": -10}}]') -> 0 ->> 'id') as hunt \gset
select pg_temp.expect_refused(format('select guild_scry(%s, ''{"food": 1000, "gold": -10}'', ''Plenty.'')', :hunt),
  'the forecast gains 1000 food, more than the 30 the council hoped for; a forecast is never rosier than the proposal');
select pg_temp.expect_refused(format('select guild_scry(%s, ''{"food": 22}'', ''Free.'')', :hunt),
  'the forecast costs 0 gold, less than the 10 the council counted; a forecast is never rosier than the proposal');
select pg_temp.expect_refused(format('select guild_scry(%s, ''{"food": 22, "gold": -10, "morale": 5}'', ''Joy.'')', :hunt),
  'the forecast gains 5 morale, which the council never proposed; a forecast is never rosier than the proposal');
select pg_temp.expect_value(format('select guild_scry(%s, ''{"food": 22, "gold": -12, "morale": -1}'', ''Wolves.'') ->> ''risk_note''', :hunt), 'Wolves.');
-- Scried again, it may only grow more cautious than the forecast it has.
select pg_temp.expect_refused(format('select guild_scry(%s, ''{"food": 30, "gold": -10}'', ''Better.'')', :hunt), 'the forecast gains 30 food, more than the 22%');
select pg_temp.expect_value(format('select guild_scry(%s, ''{"food": 20, "gold": -12, "morale": -1}'', ''Wolves.'') ->> ''predicted_delta''', :hunt), '{"food": 20, "gold": -12, "morale": -1}');
select pg_temp.expect_value(format('select guild_decide(%s, true) ->> ''status''', :hunt), 'accepted');
select pg_temp.expect_value('select guild_tick(0) ->> ''food''', '90');
reset role;

select 'one person, many accounts: all checks passed' as result;
select pg_temp.checks_passed('tests/sql/abuse.sql') as result;
rollback;
