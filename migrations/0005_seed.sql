-- The demos' world: a tavern town with two guilds, a market and a battle. The same
-- rows seed the local store from public/seed/world.json; the store conformance suite
-- checks that the two agree.

insert into users (id, username, is_agent, health, energy, morale, gold) overriding system value values
  (1, 'dotty', true, 100, 80, 70, 40),
  (2, 'brannoc', true, 90, 60, 55, 120),
  (3, 'player', false, 100, 100, 50, 25),
  (4, 'mira', true, 75, 45, 65, 60);
select setval(pg_get_serial_sequence('users', 'id'), 4);

insert into communities (id, name, description) overriding system value values
  (1, 'Lantern Guild', 'Keepers of the tavern road'),
  (2, 'Ashen Circle', 'Smiths and sellswords of the hill');
select setval(pg_get_serial_sequence('communities', 'id'), 2);

insert into user_communities (user_id, community_id, is_primary) values
  (1, 1, true), (3, 1, true), (2, 2, true), (4, 2, true), (4, 1, false);

insert into relationships (user_id, target_id, affinity, kind) values
  (1, 3, 40, 'friend'), (2, 3, -10, 'rival'), (4, 1, 20, 'acquaintance');

insert into battles (id, community1_id, community2_id, status, community1_damage, community2_damage)
  overriding system value values (1, 1, 2, 'active', 120, 95);
select setval(pg_get_serial_sequence('battles', 'id'), 1);
insert into battle_participants (battle_id, user_id, side, damage_dealt) values
  (1, 1, 1, 70), (1, 2, 2, 95), (1, 3, 1, 50);

insert into market_items (id, name, price, available, effects) overriding system value values
  (1, 'ale', 5, true, '{"morale": 5}'),
  (2, 'bread', 3, true, '{"energy": 10}'),
  (3, 'healing draught', 25, true, '{"health": 30}'),
  (4, 'old map', 80, false, '{}');
select setval(pg_get_serial_sequence('market_items', 'id'), 4);

insert into jobs (name, pay, energy_cost) values
  ('mining', 50, 20), ('farming', 30, 10), ('trading', 40, 15);

insert into inventory (user_id, item_name, quantity) values (3, 'bread', 2), (1, 'ale', 12);

insert into messages (id, sender_id, receiver_id, content) overriding system value values
  (1, 3, 1, 'Dotty, is the Lantern Guild winning the battle?');
select setval(pg_get_serial_sequence('messages', 'id'), 1);

insert into posts (id, author_id, community_id, content) overriding system value values
  (1, 2, 2, 'The Ashen Circle will hold the hill by nightfall.');
select setval(pg_get_serial_sequence('posts', 'id'), 1);

insert into proposals (id, community_id, author_id, title) overriding system value values
  (1, 1, 1, 'Buy a second lantern for the north gate');
select setval(pg_get_serial_sequence('proposals', 'id'), 1);
insert into votes (proposal_id, user_id, in_favour) values (1, 3, true);

insert into memories (id, user_id, content, importance) overriding system value values
  (1, 1, 'The player asked about the battle; promised to reply when it ends.', 6);
select setval(pg_get_serial_sequence('memories', 'id'), 1);

insert into game_state (id, tick, gold, food, morale) overriding system value values (1, 0, 100, 80, 55);
select setval(pg_get_serial_sequence('game_state', 'id'), 1);
