-- Agents a player owns (migrations/0009_world_triggers.sql, 0011/0012),
-- asserted against the real database under the grants a new Supabase project gives: an
-- action run as an agent changes the agent's rows, not the player's, and is recorded in
-- the agent's own ledger; one player cannot act as another's agent, by `act_as` or by
-- setting the mark `acting_user()` reads; a new player claims their own copies of the
-- starter agents, once. Rolled back. The transaction, the grants, the two players and
-- the checks are tests/sql/preamble.sql.

\ir preamble.sql

-- Anyone reads who owns which agent and the world's knowledge; Mira starts penniless.
set role anon;
select pg_temp.expect_count('select * from agent_owners where owner_id = 3', 3);
select pg_temp.expect_count('select * from knowledge', 4);
select pg_temp.expect_count('select * from faction_relations', 0);
select pg_temp.expect_value('select gold::text from users where id = 4', '0');
select pg_temp.expect_denied('select act_as(1, ''do_work'', ''{"job": "farming"}'')');
reset role;

-- The player (user 3) owns Dotty (1), Brannoc (2) and Mira (4).
set role authenticated;
select pg_temp.sign_in('auth-player');
select pg_temp.expect_value('select act_as(1, ''do_work'', ''{"job": "farming"}'', ''agent-work-1'') ->> ''gold''', '70');
select pg_temp.expect_value('select gold::text || ''/'' || energy::text from users where id = 1', '70/70');
select pg_temp.expect_value('select gold::text || ''/'' || energy::text from users where id = 3', '25/100');
-- Applied once by key, in Dotty's ledger (agent:1), which her owner reads.
select pg_temp.expect_value('select act_as(1, ''do_work'', ''{"job": "farming"}'', ''agent-work-1'') ->> ''gold''', '70');
select pg_temp.expect_value('select gold::text from users where id = 1', '70');
select pg_temp.expect_count('select * from applied_actions where key = ''agent-work-1''', 1);
select pg_temp.expect_value('select act_as(4, ''ignore_battle'', ''{"battle_id": 1}'') ->> ''ignored''', 'true');
select pg_temp.expect_value('select act_as(1, ''send_message'', ''{"user_id": 3, "content": "Hello, owner"}'') ->> ''sender_id''', '1');
-- Governance as an agent: a proposal with its description, and an abstention.
select pg_temp.expect_value('select act_as(1, ''create_proposal'', ''{"community_id": 1, "title": "A well", "description": "Dig a well behind the tavern."}'') ->> ''description''', 'Dig a well behind the tavern.');
select pg_temp.expect_count('select * from proposal_descriptions d join proposals p on p.id = d.proposal_id where p.author_id = 1', 1);
select pg_temp.expect_value('select act_as(1, ''abstain_from_vote'', ''{"proposal_id": 1}'') ->> ''user_id''', '1');
select pg_temp.expect_refused('select act_as(1, ''abstain_from_vote'', ''{"proposal_id": 1}'')', 'you already voted on proposal 1');
select pg_temp.expect_refused('select abstain_from_vote(1)', 'you already voted on proposal 1');  -- the player voted
-- The owner reads the agents' private rows their look-ups need.
select pg_temp.expect_count('select * from inventory where user_id = 1', 1);
select pg_temp.expect_count('select * from relationships where user_id = 4', 1);
select pg_temp.expect_count('select * from faction_relations where user_id in (1, 2, 4)', 6);
select pg_temp.expect_refused('select act_as(1, ''drop_everything'', ''{}'')', 'there is no action drop_everything');
select pg_temp.expect_refused('select act_as(1, ''buy_item'', ''{"item_name": "healing draught", "quantity": 3}'')', 'Insufficient gold. Need 75, have 70');
-- The mark is gone once the call is over: a plain action acts as the player again.
select pg_temp.expect_value('select do_work(''farming'') ->> ''gold''', '55');
select pg_temp.expect_value('select gold::text from users where id = 1', '70');
reset role;

-- Dotty's player owns no agent: she cannot act as the player's Brannoc, by `act_as` or
-- by setting the mark herself, nor make herself an owner.
set role authenticated;
select pg_temp.sign_in('auth-dotty');
select pg_temp.expect_denied('select act_as(2, ''do_work'', ''{"job": "mining"}'')');
select pg_temp.expect_denied('select set_config(''familiar.acting_agent'', ''2'', false), do_work(''mining'')');
select set_config('familiar.acting_agent', '', false);
select pg_temp.expect_denied('insert into agent_owners (agent_id, owner_id) values (2, 1)');
select pg_temp.expect_no_change('update agent_owners set owner_id = 1');
select pg_temp.expect_count('select * from inventory where user_id = 2', 0);
select pg_temp.expect_count('select * from faction_relations', 2);  -- her own only
select pg_temp.expect_no_change('update faction_relations set loyalty = 100');
-- Her own actions still act as herself (an agent acting as itself is allowed).
select pg_temp.expect_value('select act_as(1, ''do_work'', ''{"job": "farming"}'') ->> ''gold''', '100');
reset role;
select pg_temp.expect_value('select gold::text || ''/'' || energy::text from users where id = 2', '120/60');

-- Each agent its own ledger (0012): the same key used by Dotty and by Mira is two
-- actions, each applied once, recorded under `agent:1` and `agent:4`.
set role authenticated;
select pg_temp.sign_in('auth-player');
select pg_temp.expect_value('select act_as(1, ''do_work'', ''{"job": "farming"}'', ''twin-key'') ->> ''gold''', '130');
select pg_temp.expect_value('select act_as(4, ''do_work'', ''{"job": "farming"}'', ''twin-key'') ->> ''gold''', '30');
select pg_temp.expect_value('select act_as(4, ''do_work'', ''{"job": "farming"}'', ''twin-key'') ->> ''gold''', '30');
select pg_temp.expect_value('select act_as(1, ''do_work'', ''{"job": "farming"}'', ''twin-key'') ->> ''gold''', '130');
select pg_temp.expect_value('select gold::text || ''/'' || energy::text from users where id = 1', '130/50');
select pg_temp.expect_value('select gold::text || ''/'' || energy::text from users where id = 4', '30/35');
select pg_temp.expect_value('select string_agg(user_id, '','' order by user_id) from applied_actions where key = ''twin-key''', 'agent:1,agent:4');
-- The player's own call under that key is a third action, in the player's ledger.
select pg_temp.expect_value('select do_work(''farming'', ''twin-key'') ->> ''gold''', '85');
select pg_temp.expect_count('select * from applied_actions where key = ''twin-key''', 3);
reset role;
set role authenticated;
select pg_temp.sign_in('auth-dotty');
-- Dotty reads her own agent ledger, not Mira's; she cannot write into Mira's, nor read
-- it by key through a mark set by hand.
select pg_temp.expect_count('select * from applied_actions where user_id = ''agent:4''', 0);
select pg_temp.expect_denied('insert into applied_actions (user_id, key, tool, result) values (''agent:4'', ''forged'', ''do_work'', ''{}'')');
select pg_temp.expect_denied('select set_config(''familiar.acting_agent'', ''4'', true), do_work(''farming'', ''twin-key'')');
reset role;

-- Each player their own agents (0011, 0012): a new player claims copies of the starters.
select set_config('request.jwt.claims', '{}', false);
set role anon;
select pg_temp.expect_count('select * from starter_agents', 3);
select pg_temp.expect_denied('select claim_agents()');
reset role;
set role authenticated;
select pg_temp.sign_in('auth-newcomer');
select pg_temp.expect_refused('select claim_agents()', 'sign in and enter the world first');
select (enter_world('newcomer') ->> 'id') as newcomer \gset
select claim_agents() as claimed \gset
select (:'claimed'::jsonb -> 0 ->> 'agent_id') as dotty2, (:'claimed'::jsonb -> 2 ->> 'agent_id') as mira2 \gset
select pg_temp.expect_value($$select string_agg(e ->> 'template_id', ',') from jsonb_array_elements('$$ || :'claimed' || $$'::jsonb) e$$, '1,2,4');
select pg_temp.expect_count(format('select * from agent_owners where owner_id = %s', :newcomer), 3);
-- Idempotent: the same copies again, no new user.
select pg_temp.expect_value('select claim_agents()::text', :'claimed');
select pg_temp.expect_count(format('select * from agent_copies where owner_id = %s', :newcomer), 3);
-- A copy has its starter's stats (Mira's as she is now), communities, standing and inventory; Dotty's friend
-- is now her player, and Mira's acquaintance Dotty's copy.
select pg_temp.expect_value(format('select gold::text || ''/'' || energy::text || ''/'' || is_agent::text from users where id = %s', :mira2), '30/35/true');
select pg_temp.expect_value(format('select string_agg(community_id::text, '','' order by community_id) from user_communities where user_id = %s', :mira2), '1,2');
select pg_temp.expect_count(format('select * from faction_relations where user_id = %s', :mira2), 2);
select pg_temp.expect_value(format('select quantity::text from inventory where user_id = %s and item_name = ''ale''', :dotty2), '12');
select pg_temp.expect_value(format('select target_id::text || '' '' || kind from relationships where user_id = %s', :dotty2), :'newcomer' || ' friend');
select pg_temp.expect_value(format('select target_id::text from relationships where user_id = %s', :mira2), :'dotty2');
-- The newcomer acts as their copy, whose ledger is its own; not as the seeded agents.
select pg_temp.expect_value(format('select act_as(%s, ''do_work'', ''{"job": "farming"}'', ''twin-key'') ->> ''gold''', :mira2), '60');
select pg_temp.expect_count(format('select * from applied_actions where user_id = ''agent:%s''', :mira2), 1);
select pg_temp.expect_denied('select act_as(4, ''do_work'', ''{"job": "farming"}'')');
select pg_temp.expect_count('select * from applied_actions where user_id = ''agent:4''', 0);
reset role;
-- Another newcomer gets copies of their own and cannot act as the first's.
set role authenticated;
select pg_temp.sign_in('auth-second');
select enter_world('newcomer') is not null as entered \gset
select pg_temp.expect_value(format('select count(*)::text from jsonb_array_elements(claim_agents()) e where (e ->> ''agent_id'')::bigint not in (%s, %s)', :dotty2, :mira2), '3');
select pg_temp.expect_denied(format('select act_as(%s, ''do_work'', ''{"job": "farming"}'')', :mira2));
select pg_temp.expect_denied(format('insert into agent_owners (agent_id, owner_id) values (%s, world_user())', :mira2));
select pg_temp.expect_denied(format('insert into agent_copies (agent_id, template_id, owner_id) values (%s, 4, world_user())', :mira2));
reset role;
select pg_temp.expect_value(format('select gold::text from users where id = %s', :mira2), '60');
-- The seeded player owns the starters themselves: no copy is made for them.
set role authenticated;
select pg_temp.sign_in('auth-player');
select pg_temp.expect_value('select string_agg(e ->> ''agent_id'', '','') from jsonb_array_elements(claim_agents()) e', '1,2,4');
reset role;
select pg_temp.expect_count('select * from agent_copies c join users u on u.id = c.owner_id where u.auth_id in (''auth-newcomer'', ''auth-second'', ''auth-player'')', 6);

-- A blank key is no key (0016): each call applies, and nothing is kept under it.
set role authenticated;
select pg_temp.sign_in('auth-player');
select (gold + 30)::text as once, (gold + 60)::text as twice from users where id = 1 \gset
select pg_temp.expect_value('select act_as(1, ''do_work'', ''{"job": "farming"}'', '''') ->> ''gold''', :'once');
select pg_temp.expect_value('select act_as(1, ''do_work'', ''{"job": "farming"}'', ''  '') ->> ''gold''', :'twice');
select pg_temp.expect_count('select * from applied_actions where btrim(key) = ''''', 0);
reset role;

select 'agents a player owns: all checks passed' as result;
select pg_temp.checks_passed('tests/sql/agents.sql') as result;
rollback;
