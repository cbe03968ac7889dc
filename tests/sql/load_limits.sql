-- The limits 0015 adds to 0013's hourly ones (migrations/0015_world_under_load.sql),
-- one request after another, under the grants a new Supabase project gives: a day's
-- posts, messages and proposals per account, and a standing quota of memories per
-- world user, each refused in its sentence; and a retried key answers the first
-- result. The earlier writes of the day are played by rows the superuser dates two
-- hours back, so 0013's hourly limits do not meet them first. Rolled back; the
-- transaction, grants and checks are tests/sql/preamble.sql.

\ir preamble.sql

create temp table accounts (sub text primary key, player bigint, dotty bigint);
grant all on accounts to anon, authenticated;
create function pg_temp.new_account(sub text) returns void language plpgsql as $$
declare me bigint; claimed jsonb;
begin
  perform pg_temp.sign_in(sub);
  me := (enter_world(sub) ->> 'id')::bigint;
  claimed := claim_agents();
  insert into accounts values (sub, me, (claimed -> 0 ->> 'agent_id')::bigint);
end $$;
create function pg_temp.who(sub text, name text) returns bigint language sql as $$
  select case name when 'dotty' then dotty else player end from accounts a where a.sub = who.sub
$$;

set role authenticated;
select pg_temp.new_account('load-' || n) from generate_series(1, 3) n;
reset role;

-- Posts: 149 made earlier today by load-1's player and Dotty together; the 150th goes
-- through (from the player), the 151st is refused (from Dotty: one account).
insert into posts (author_id, community_id, content, created_at)
  select case when n % 2 = 0 then pg_temp.who('load-1', 'player') else pg_temp.who('load-1', 'dotty') end,
         null, 'Earlier post ' || n, now() - interval '2 hours'
  from generate_series(1, 149) n;
set role authenticated;
select pg_temp.sign_in('load-1');
select pg_temp.expect_value('select create_post(''The 150th.'') ->> ''content''', 'The 150th.');
select pg_temp.expect_refused(format('select act_as(%s, ''create_post'', ''{"content": "The 151st."}'')', pg_temp.who('load-1', 'dotty')),
  'you and your agents may make at most 150 posts a day; try again after 2% UTC');
reset role;
-- Another account posts freely.
set role authenticated;
select pg_temp.sign_in('load-2');
select pg_temp.expect_value('select create_post(''Hello.'') ->> ''content''', 'Hello.');
reset role;

-- Messages: 299 earlier today; the 300th goes through, the 301st is refused.
insert into messages (sender_id, receiver_id, content, created_at)
  select pg_temp.who('load-2', 'player'), 1, 'Earlier message ' || n, now() - interval '2 hours'
  from generate_series(1, 299) n;
set role authenticated;
select pg_temp.sign_in('load-2');
select pg_temp.expect_value('select send_message(1, ''The 300th.'') ->> ''content''', 'The 300th.');
select pg_temp.expect_refused('select send_message(1, ''The 301st.'')',
  'you and your agents may make at most 300 messages a day; try again after 2% UTC');
reset role;

-- Proposals: 29 earlier today by load-3's Dotty; the 30th goes through, the 31st is
-- refused.
insert into proposals (community_id, author_id, title, created_at)
  select 1, pg_temp.who('load-3', 'dotty'), 'Earlier proposal ' || n, now() - interval '2 hours'
  from generate_series(1, 29) n;
set role authenticated;
select pg_temp.sign_in('load-3');
select pg_temp.expect_value(format('select act_as(%s, ''create_proposal'', ''{"community_id": 1, "title": "The 30th"}'') ->> ''title''', pg_temp.who('load-3', 'dotty')), 'The 30th');
select pg_temp.expect_refused(format('select act_as(%s, ''create_proposal'', ''{"community_id": 1, "title": "The 31st"}'')', pg_temp.who('load-3', 'dotty')),
  'you and your agents may make at most 30 proposals a day; try again after 2% UTC');
reset role;

-- Memories: a world user keeps at most 1000, however old; one forgotten makes room.
insert into memories (user_id, content, created_at)
  select pg_temp.who('load-3', 'player'), 'Old memory ' || n, now() - interval '30 days'
  from generate_series(1, 999) n;
set role authenticated;
select pg_temp.sign_in('load-3');
insert into memories (user_id, content) values (pg_temp.who('load-3', 'player'), 'The 1000th.');
select pg_temp.expect_refused(format('insert into memories (user_id, content) values (%s, ''One more.'')', pg_temp.who('load-3', 'player')),
  'each of you may keep at most 1000 memories; delete some before adding more');
delete from memories where user_id = pg_temp.who('load-3', 'player') and content = 'Old memory 1';
insert into memories (user_id, content) values (pg_temp.who('load-3', 'player'), 'One more.');
select pg_temp.expect_count(format('select * from memories where user_id = %s', pg_temp.who('load-3', 'player')), 1000);
reset role;

-- A retried key answers the first result and applies nothing again, for a player and
-- for an agent (whose ledger is its own).
set role authenticated;
select pg_temp.sign_in('load-2');
select do_work('farming', 'work-1') as first_work \gset
select pg_temp.expect_value('select do_work(''farming'', ''work-1'')::text', :'first_work');
select pg_temp.expect_value(format('select gold::text from users where id = %s', pg_temp.who('load-2', 'player')), '55');
select act_as(pg_temp.who('load-2', 'dotty'), 'do_work', '{"job": "farming"}', 'work-1') as agent_work \gset
select pg_temp.expect_value(format('select act_as(%s, ''do_work'', ''{"job": "farming"}'', ''work-1'')::text', pg_temp.who('load-2', 'dotty')), :'agent_work');
select pg_temp.expect_count('select * from applied_actions where key = ''work-1''', 2);
reset role;

select 'a day''s writes and the memory quota: all checks passed' as result;
select pg_temp.checks_passed('tests/sql/load_limits.sql') as result;
rollback;
