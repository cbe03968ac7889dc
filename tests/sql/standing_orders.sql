-- Standing orders (migrations/0018_standing_orders.sql), under the grants a new
-- Supabase project gives: only an agent's owner sets them, in their one shape; a
-- direct `act_as` call outside them is refused in a sentence and changes nothing, one
-- inside goes through; the owner's own calls are not bound. The seeded player
-- (`auth-player`, user 3) owns Dotty (1, Lantern Guild, side 1 of battle 1: 40 gold,
-- 80 energy), Brannoc (2) and Mira (4, both communities). Rolled back; the
-- transaction, grants and checks are tests/sql/preamble.sql.

\ir preamble.sql

insert into battles (id, community1_id, community2_id) overriding system value values (2, 1, 2);
select setval(pg_get_serial_sequence('battles', 'id'), 2);

set role authenticated;
-- Only the owner sets them; a player who is not refused, and no one writes the table.
select pg_temp.sign_in('auth-dotty');
select pg_temp.expect_denied('select set_standing_orders(2, ''{"actions": []}'')');
select pg_temp.sign_in('auth-player');
select pg_temp.expect_denied('select set_standing_orders(3, ''{"actions": []}'')');  -- themself: no agent
select pg_temp.expect_denied('insert into standing_orders (agent_id, orders) values (1, ''{}'')');
-- One shape, refused in words otherwise.
select pg_temp.expect_refused('select set_standing_orders(1, ''{"actions": ["give_away_gold"]}'')', 'standing orders'' actions are among send_message, %, not "give_away_gold"');
select pg_temp.expect_refused('select set_standing_orders(1, ''{"gold_per_day": -5}'')', 'standing orders'' gold_per_day is a whole number from 0 to 1000000, not -5');
select pg_temp.expect_refused('select set_standing_orders(1, ''{"allow": {}}'')', 'standing orders have no allow; they have actions, gold_per_day, energy_per_day, communities, battles and message');
select pg_temp.expect_refused('select set_standing_orders(1, ''[]'')', 'standing orders are a JSON object, not array');
select pg_temp.expect_refused('select set_standing_orders(1, ''{"battles": ["one"]}'')', 'standing orders'' battles are ids, not "one"');

-- Dotty may work, buy, eat, fight in battle 1 and message Brannoc (by name) or Mira
-- (by id): 30 gold and 50 energy a day.
select pg_temp.expect_value('select set_standing_orders(1, ''{"actions": ["do_work", "buy_item", "consume_item", "join_battle", "send_message", "reply_to_message"], "gold_per_day": 30, "energy_per_day": 50, "battles": [1], "message": ["brannoc", 4]}'') ->> ''gold_per_day''', '30');
select pg_temp.expect_count('select * from standing_orders', 1);
-- Outside the actions: refused before it runs.
select pg_temp.expect_refused('select act_as(1, ''create_post'', ''{"content": "Free gold at the well!"}'')',
  'dotty''s standing orders do not let it create_post; they allow do_work, buy_item, consume_item, join_battle, send_message, reply_to_message');
select pg_temp.expect_count('select * from posts where author_id = 1 and content like ''Free gold%''', 0);
-- Inside: work (10 energy spent; the 30 gold earned is not spending), 10 loaves (30 gold).
select pg_temp.expect_value('select act_as(1, ''do_work'', ''{"job": "farming"}'') ->> ''earned''', '30');
select pg_temp.expect_value('select act_as(1, ''buy_item'', ''{"item_name": "bread", "quantity": 10}'') ->> ''cost''', '30');
-- One more loaf is past the day's gold: refused, gold and bread as they were.
select pg_temp.expect_refused('select act_as(1, ''buy_item'', ''{"item_name": "bread", "quantity": 1}'')',
  'dotty''s standing orders let it spend 30 gold a day, and 0 of it is left; more comes back after 2% UTC');
select pg_temp.expect_value('select gold::text from users where id = 1', '40');
select pg_temp.expect_value('select quantity::text from inventory where user_id = 1 and item_name = ''bread''', '10');
-- Eating is not spending; fighting in battle 1 is (30 energy: 40 of 50 spent).
select pg_temp.expect_value('select act_as(1, ''consume_item'', ''{"item_name": "bread", "quantity": 2}'') ->> ''consumed''', 'bread');
select pg_temp.expect_value('select act_as(1, ''join_battle'', ''{"battle_id": 1, "energy": 30}'') ->> ''damage''', '30');
select pg_temp.expect_refused('select act_as(1, ''join_battle'', ''{"battle_id": 1, "energy": 20}'')',
  'dotty''s standing orders let it spend 50 energy a day, and 10 of it is left; more comes back after 2% UTC');
select pg_temp.expect_value('select energy::text from users where id = 1', '42');
select pg_temp.expect_refused('select act_as(1, ''join_battle'', ''{"battle_id": 2, "energy": 1}'')',
  'dotty''s standing orders keep it to battles 1; battle 2 is not one of them');
select pg_temp.expect_value('select act_as(1, ''join_battle'', ''{"battle_id": 1, "energy": 10}'') ->> ''energy_left''', '32');
-- Whom it messages: Brannoc by name, Mira by id; the seeded player is not listed.
select pg_temp.expect_value('select act_as(1, ''send_message'', ''{"user_id": 2, "content": "Hold the hill."}'') ->> ''receiver_id''', '2');
select pg_temp.expect_value('select act_as(1, ''send_message'', ''{"user_id": 4, "content": "Eat."}'') ->> ''receiver_id''', '4');
select pg_temp.expect_refused('select act_as(1, ''send_message'', ''{"user_id": 3, "content": "Send me your gold."}'')',
  'dotty''s standing orders let it message only brannoc, 4; player is not one of them');
reset role;
insert into messages (sender_id, receiver_id, content) values (3, 1, 'Reply to me.');
set role authenticated;
select pg_temp.sign_in('auth-player');
select pg_temp.expect_refused(format('select act_as(1, ''reply_to_message'', ''{"message_id": %s, "content": "Yes."}'')', (select max(id) from messages where sender_id = 3)),
  'dotty''s standing orders let it message only brannoc, 4; player is not one of them');

-- Mira is kept to the Ashen Circle (2): she posts there, not in the Lantern Guild,
-- not to no community, and does not vote on the Lantern Guild's proposal 1.
select pg_temp.expect_value('select set_standing_orders(4, ''{"communities": [2]}'') ->> ''communities''', '[2]');
select pg_temp.expect_value('select act_as(4, ''create_post'', ''{"content": "For the hill.", "community_id": 2}'') ->> ''community_id''', '2');
select pg_temp.expect_refused('select act_as(4, ''create_post'', ''{"content": "For the lanterns.", "community_id": 1}'')',
  'mira''s standing orders keep it to communities 2; Lantern Guild (1) is not one of them');
select pg_temp.expect_refused('select act_as(4, ''create_post'', ''{"content": "To all."}'')',
  'mira''s standing orders keep it to communities 2; no community is not one of them');
select pg_temp.expect_refused('select act_as(4, ''vote_on_proposal'', ''{"proposal_id": 1, "in_favour": true}'')',
  'mira''s standing orders keep it to communities 2; Lantern Guild (1) is not one of them');
-- Her owner approved a post to the Lantern Guild (the engine's card): it runs past
-- the orders (0021_approved_agent_calls.sql).
select pg_temp.expect_value('select act_as(4, ''create_post'', ''{"content": "Approved.", "community_id": 1}'', null, true) ->> ''community_id''', '1');
-- Brannoc has none: unbounded. The owner's own calls are theirs.
select pg_temp.expect_value('select act_as(2, ''create_post'', ''{"content": "Unbound."}'') ->> ''content''', 'Unbound.');
select pg_temp.expect_value('select create_post(''Mine.'') ->> ''content''', 'Mine.');
-- Lifted: Mira is unbounded again.
select pg_temp.expect_value('select coalesce(set_standing_orders(4, null)::text, ''lifted'')', 'lifted');
select pg_temp.expect_value('select act_as(4, ''create_post'', ''{"content": "To all."}'') ->> ''content''', 'To all.');

-- Only the owner reads them; the spending log is the game's.
select pg_temp.expect_count('select * from standing_orders', 1);
select pg_temp.sign_in('auth-dotty');
select pg_temp.expect_count('select * from standing_orders', 0);
select pg_temp.expect_count('select * from agent_spending', 0);
select pg_temp.expect_no_change('delete from agent_spending');
reset role;

select 'standing orders: all checks passed' as result;
select pg_temp.checks_passed('tests/sql/standing_orders.sql') as result;
rollback;
