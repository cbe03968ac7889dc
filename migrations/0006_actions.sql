-- The world's actions as database functions, called through PostgREST's `rpc`: each
-- checks the game's rules (gold, energy, stats within 0-100, membership), changes the
-- rows and records its result in the signed-in user's ledger, all in one transaction.
-- Given a `key` already in the user's ledger, a function returns the recorded result
-- and changes nothing (apply-once). A refusal is `raise exception` (P0001) with a
-- plain reason the model can plan around. The local store runs the same rules in Rust
-- (src/world/functions/); the conformance suite checks that they answer alike.
--
-- The functions are SECURITY DEFINER: they write rows no policy lets a user write, so
-- each acts only as `world_user()` (from the JWT) and pins its search_path.

-- The caller's world user, locked for the rest of the transaction, or a refusal.
create function acting_user() returns users
  language plpgsql security definer set search_path = public, pg_temp as $$
declare me users;
begin
  select * into me from users where auth_id = auth_user_id() for update;
  if not found then
    raise exception 'sign in and enter the world first' using errcode = '42501';
  end if;
  return me;
end $$;

-- The result recorded under the caller's `key`, if any.
create function ledger_result(key text) returns jsonb
  language sql stable security definer set search_path = public, pg_temp as $$
  select result from applied_actions a
  where a.user_id = auth_user_id() and a.key = ledger_result.key
$$;

-- Records `result` under the caller's `key` (none without a key) and returns it.
create function ledger_record(key text, tool text, result jsonb) returns jsonb
  language plpgsql security definer set search_path = public, pg_temp as $$
begin
  if key is not null then
    insert into applied_actions (user_id, key, tool, result)
      values (auth_user_id(), ledger_record.key, ledger_record.tool, ledger_record.result);
  end if;
  return result;
end $$;

-- Trimmed text of 1 to `max` characters.
create function checked_text(value text, what text, max integer) returns text
  language plpgsql immutable set search_path = public, pg_temp as $$
declare trimmed text := btrim(coalesce(value, ''));
begin
  if length(trimmed) = 0 then
    raise exception 'the % is empty', what;
  elsif length(trimmed) > max then
    raise exception 'the % is % characters; at most %', what, length(trimmed), max;
  end if;
  return trimmed;
end $$;

-- A whole number from 1 to `max`.
create function checked_amount(value integer, what text, max integer) returns integer
  language plpgsql immutable set search_path = public, pg_temp as $$
begin
  if value is null or value < 1 or value > max then
    raise exception '% must be 1 to %, not %', what, max, coalesce(value::text, 'null');
  end if;
  return value;
end $$;

-- A stat after a change, kept within 0-100.
create function clamped_stat(value bigint) returns integer
  language sql immutable set search_path = public, pg_temp as $$
  select greatest(0, least(100, value))::integer
$$;

-- The caller's world user, created on first call (a new player: 25 gold, fresh
-- stats). Idempotent; `username` is a wish, made unique if taken.
create function enter_world(username text default null) returns jsonb
  language plpgsql security definer set search_path = public, pg_temp as $$
#variable_conflict use_column
declare
  sub text := auth_user_id();
  me users;
  wanted text;
begin
  if sub is null then
    raise exception 'sign in first' using errcode = '42501';
  end if;
  select * into me from users where auth_id = sub;
  if not found then
    wanted := coalesce(nullif(btrim(enter_world.username), ''), 'player');
    wanted := left(wanted, 40);
    if exists (select 1 from users where username = wanted) then
      wanted := wanted || '-' || left(md5(sub), 6);
    end if;
    insert into users (username, auth_id, gold) values (wanted, sub, 25) returning * into me;
  end if;
  return to_jsonb(me);
end $$;

create function send_message(user_id bigint, content text, key text default null)
  returns jsonb language plpgsql security definer set search_path = public, pg_temp as $$
#variable_conflict use_column
declare me users; body text; sent messages;
begin
  if ledger_result(key) is not null then return ledger_result(key); end if;
  me := acting_user();
  body := checked_text(send_message.content, 'message', 2000);
  if not exists (select 1 from users u where u.id = send_message.user_id) then
    raise exception 'there is no user %', send_message.user_id;
  end if;
  insert into messages (sender_id, receiver_id, content)
    values (me.id, send_message.user_id, body) returning * into sent;
  return ledger_record(key, 'send_message', to_jsonb(sent));
end $$;

create function reply_to_message(message_id bigint, content text, key text default null)
  returns jsonb language plpgsql security definer set search_path = public, pg_temp as $$
#variable_conflict use_column
declare me users; body text; original messages; sent messages;
begin
  if ledger_result(key) is not null then return ledger_result(key); end if;
  me := acting_user();
  body := checked_text(reply_to_message.content, 'reply', 2000);
  select * into original from messages m
    where m.id = reply_to_message.message_id and me.id in (m.sender_id, m.receiver_id);
  if not found then
    raise exception 'there is no message %', reply_to_message.message_id;
  end if;
  insert into messages (sender_id, receiver_id, reply_to, content)
    values (me.id,
            case when original.sender_id = me.id then original.receiver_id else original.sender_id end,
            original.id, body)
    returning * into sent;
  return ledger_record(key, 'reply_to_message', to_jsonb(sent));
end $$;

create function create_post(content text, community_id bigint default null, key text default null)
  returns jsonb language plpgsql security definer set search_path = public, pg_temp as $$
#variable_conflict use_column
declare me users; body text; post posts;
begin
  if ledger_result(key) is not null then return ledger_result(key); end if;
  me := acting_user();
  body := checked_text(create_post.content, 'post', 2000);
  if create_post.community_id is not null
    and not exists (select 1 from communities c where c.id = create_post.community_id) then
    raise exception 'there is no community %', create_post.community_id;
  end if;
  insert into posts (author_id, community_id, content)
    values (me.id, create_post.community_id, body) returning * into post;
  return ledger_record(key, 'create_post', to_jsonb(post));
end $$;

create function join_battle(battle_id bigint, energy integer, key text default null)
  returns jsonb language plpgsql security definer set search_path = public, pg_temp as $$
#variable_conflict use_column
declare me users; amount integer; battle battles; fighting_side integer;
begin
  if ledger_result(key) is not null then return ledger_result(key); end if;
  me := acting_user();
  amount := checked_amount(join_battle.energy, 'energy', 100);
  select * into battle from battles b where b.id = join_battle.battle_id for update;
  if not found then
    raise exception 'there is no battle %', join_battle.battle_id;
  end if;
  if battle.status <> 'active' then
    raise exception 'battle % is over', battle.id;
  end if;
  select case m.community_id when battle.community1_id then 1 else 2 end into fighting_side
    from user_communities m
    where m.user_id = me.id and m.community_id in (battle.community1_id, battle.community2_id)
    order by m.is_primary desc, m.community_id
    limit 1;
  if fighting_side is null then
    raise exception 'you belong to neither side of battle %', battle.id;
  end if;
  if me.energy < amount then
    raise exception 'Insufficient energy. Need %, have %', amount, me.energy;
  end if;
  update users set energy = users.energy - amount where id = me.id;
  insert into battle_participants (battle_id, user_id, side, damage_dealt)
    values (battle.id, me.id, fighting_side, amount)
    on conflict (battle_id, user_id)
    do update set damage_dealt = battle_participants.damage_dealt + excluded.damage_dealt;
  if fighting_side = 1 then
    update battles set community1_damage = battles.community1_damage + amount where id = battle.id;
  else
    update battles set community2_damage = battles.community2_damage + amount where id = battle.id;
  end if;
  return ledger_record(key, 'join_battle', jsonb_build_object('battle_id', battle.id,
    'side', fighting_side, 'damage', amount, 'energy_left', me.energy - amount));
end $$;

create function buy_item(item_name text, quantity integer default 1, key text default null)
  returns jsonb language plpgsql security definer set search_path = public, pg_temp as $$
#variable_conflict use_column
declare me users; amount integer; item market_items; cost integer;
begin
  if ledger_result(key) is not null then return ledger_result(key); end if;
  me := acting_user();
  amount := checked_amount(buy_item.quantity, 'quantity', 100);
  select * into item from market_items i where i.name = buy_item.item_name and i.available;
  if not found then
    raise exception 'Item % not found in the market', buy_item.item_name;
  end if;
  cost := item.price * amount;
  if me.gold < cost then
    raise exception 'Insufficient gold. Need %, have %', cost, me.gold;
  end if;
  update users set gold = users.gold - cost where id = me.id;
  insert into inventory (user_id, item_name, quantity) values (me.id, item.name, amount)
    on conflict (user_id, item_name)
    do update set quantity = inventory.quantity + excluded.quantity;
  return ledger_record(key, 'buy_item', jsonb_build_object('purchased', item.name,
    'quantity', amount, 'cost', cost, 'gold_left', me.gold - cost));
end $$;

create function consume_item(item_name text, quantity integer default 1, key text default null)
  returns jsonb language plpgsql security definer set search_path = public, pg_temp as $$
#variable_conflict use_column
declare me users; amount integer; have integer; item market_items; now_stats jsonb := '{}';
begin
  if ledger_result(key) is not null then return ledger_result(key); end if;
  me := acting_user();
  amount := checked_amount(consume_item.quantity, 'quantity', 100);
  select i.quantity into have from inventory i
    where i.user_id = me.id and i.item_name = consume_item.item_name for update;
  have := coalesce(have, 0);
  if have < amount then
    raise exception 'Insufficient % in inventory: need %, have %',
      consume_item.item_name, amount, have;
  end if;
  select * into item from market_items i where i.name = consume_item.item_name;
  if not found then
    raise exception 'Item % is unknown', consume_item.item_name;
  end if;
  if jsonb_typeof(item.effects -> 'energy') = 'number' then
    now_stats := now_stats || jsonb_build_object('energy',
      clamped_stat(me.energy + (item.effects ->> 'energy')::bigint * amount));
  end if;
  if jsonb_typeof(item.effects -> 'health') = 'number' then
    now_stats := now_stats || jsonb_build_object('health',
      clamped_stat(me.health + (item.effects ->> 'health')::bigint * amount));
  end if;
  if jsonb_typeof(item.effects -> 'morale') = 'number' then
    now_stats := now_stats || jsonb_build_object('morale',
      clamped_stat(me.morale + (item.effects ->> 'morale')::bigint * amount));
  end if;
  update users set
    energy = coalesce((now_stats ->> 'energy')::integer, users.energy),
    health = coalesce((now_stats ->> 'health')::integer, users.health),
    morale = coalesce((now_stats ->> 'morale')::integer, users.morale)
    where id = me.id;
  update inventory set quantity = inventory.quantity - amount
    where user_id = me.id and item_name = item.name;
  return ledger_record(key, 'consume_item', jsonb_build_object('consumed', item.name,
    'quantity', amount, 'effects', item.effects, 'now', now_stats));
end $$;

create function do_work(job text, key text default null)
  returns jsonb language plpgsql security definer set search_path = public, pg_temp as $$
#variable_conflict use_column
declare me users; work jobs;
begin
  if ledger_result(key) is not null then return ledger_result(key); end if;
  me := acting_user();
  select * into work from jobs j where j.name = do_work.job;
  if not found then
    raise exception 'Unknown job type: %', do_work.job;
  end if;
  if me.energy < work.energy_cost then
    raise exception 'Insufficient energy. Need %, have %', work.energy_cost, me.energy;
  end if;
  update users set energy = users.energy - work.energy_cost, gold = users.gold + work.pay
    where id = me.id;
  return ledger_record(key, 'do_work', jsonb_build_object('job', work.name,
    'earned', work.pay, 'energy_spent', work.energy_cost,
    'gold', me.gold + work.pay, 'energy', me.energy - work.energy_cost));
end $$;

create function join_community(community_id bigint, key text default null)
  returns jsonb language plpgsql security definer set search_path = public, pg_temp as $$
#variable_conflict use_column
declare me users; community communities;
begin
  if ledger_result(key) is not null then return ledger_result(key); end if;
  me := acting_user();
  select * into community from communities c where c.id = join_community.community_id;
  if not found then
    raise exception 'there is no community %', join_community.community_id;
  end if;
  if exists (select 1 from user_communities m
             where m.user_id = me.id and m.community_id = community.id) then
    raise exception 'you already belong to %', community.name;
  end if;
  insert into user_communities (user_id, community_id) values (me.id, community.id);
  return ledger_record(key, 'join_community', jsonb_build_object('joined',
    jsonb_build_object('id', community.id, 'name', community.name)));
end $$;

create function leave_community(community_id bigint, key text default null)
  returns jsonb language plpgsql security definer set search_path = public, pg_temp as $$
#variable_conflict use_column
declare me users;
begin
  if ledger_result(key) is not null then return ledger_result(key); end if;
  me := acting_user();
  delete from user_communities m
    where m.user_id = me.id and m.community_id = leave_community.community_id;
  if not found then
    raise exception 'you are not a member of community %', leave_community.community_id;
  end if;
  return ledger_record(key, 'leave_community',
    jsonb_build_object('left', leave_community.community_id));
end $$;

create function vote_on_proposal(proposal_id bigint, in_favour boolean, key text default null)
  returns jsonb language plpgsql security definer set search_path = public, pg_temp as $$
#variable_conflict use_column
declare me users; proposal proposals; cast_vote votes;
begin
  if ledger_result(key) is not null then return ledger_result(key); end if;
  me := acting_user();
  select * into proposal from proposals p where p.id = vote_on_proposal.proposal_id;
  if not found then
    raise exception 'there is no proposal %', vote_on_proposal.proposal_id;
  end if;
  if proposal.status <> 'open' then
    raise exception 'proposal % is closed', proposal.id;
  end if;
  if exists (select 1 from votes v where v.proposal_id = proposal.id and v.user_id = me.id) then
    raise exception 'you already voted on proposal %', proposal.id;
  end if;
  insert into votes (proposal_id, user_id, in_favour)
    values (proposal.id, me.id, coalesce(vote_on_proposal.in_favour, false))
    returning * into cast_vote;
  return ledger_record(key, 'vote_on_proposal', to_jsonb(cast_vote));
end $$;

create function create_proposal(community_id bigint, title text, key text default null)
  returns jsonb language plpgsql security definer set search_path = public, pg_temp as $$
#variable_conflict use_column
declare me users; heading text; proposal proposals;
begin
  if ledger_result(key) is not null then return ledger_result(key); end if;
  me := acting_user();
  heading := checked_text(create_proposal.title, 'title', 200);
  if not exists (select 1 from user_communities m
                 where m.user_id = me.id and m.community_id = create_proposal.community_id) then
    raise exception 'you are not a member of community %', create_proposal.community_id;
  end if;
  insert into proposals (community_id, author_id, title)
    values (create_proposal.community_id, me.id, heading) returning * into proposal;
  return ledger_record(key, 'create_proposal', to_jsonb(proposal));
end $$;

-- The guild's next tick (seed 001): the accepted proposals' effects (gold, food,
-- morale) applied to the latest state as a new state; they become `applied`.
create function guild_tick(key text default null)
  returns jsonb language plpgsql security definer set search_path = public, pg_temp as $$
#variable_conflict use_column
declare me users; latest game_state; effects record; next_state game_state; applied integer;
begin
  if ledger_result(key) is not null then return ledger_result(key); end if;
  me := acting_user();
  select * into latest from game_state order by tick desc limit 1 for update;
  if not found then
    raise exception 'the guild has no state yet';
  end if;
  select coalesce(sum((p.effects ->> 'gold')::integer) filter (where jsonb_typeof(p.effects -> 'gold') = 'number'), 0) as gold,
         coalesce(sum((p.effects ->> 'food')::integer) filter (where jsonb_typeof(p.effects -> 'food') = 'number'), 0) as food,
         coalesce(sum((p.effects ->> 'morale')::integer) filter (where jsonb_typeof(p.effects -> 'morale') = 'number'), 0) as morale,
         count(*) as n
    into effects
    from guild_proposals p where p.state_id = latest.id and p.status = 'accepted';
  insert into game_state (tick, gold, food, morale)
    values (latest.tick + 1, greatest(0, latest.gold + effects.gold),
            greatest(0, latest.food + effects.food), clamped_stat(latest.morale + effects.morale))
    returning * into next_state;
  update guild_proposals set status = 'applied' where state_id = latest.id and status = 'accepted';
  get diagnostics applied = row_count;
  return ledger_record(key, 'guild_tick', jsonb_build_object('tick', next_state.tick,
    'gold', next_state.gold, 'food', next_state.food, 'morale', next_state.morale,
    'applied', applied));
end $$;

-- Only signed-in users run actions; helpers are for the functions above.
do $$
declare f text;
begin
  foreach f in array array['acting_user()', 'ledger_result(text)',
    'ledger_record(text, text, jsonb)', 'checked_text(text, text, integer)',
    'checked_amount(integer, text, integer)', 'clamped_stat(bigint)']
  loop
    execute format('revoke all on function %s from public', f);
  end loop;
  foreach f in array array['enter_world(text)', 'send_message(bigint, text, text)',
    'reply_to_message(bigint, text, text)', 'create_post(text, bigint, text)',
    'join_battle(bigint, integer, text)', 'buy_item(text, integer, text)',
    'consume_item(text, integer, text)', 'do_work(text, text)',
    'join_community(bigint, text)', 'leave_community(bigint, text)',
    'vote_on_proposal(bigint, boolean, text)', 'create_proposal(bigint, text, text)',
    'guild_tick(text)']
  loop
    execute format('revoke all on function %s from public', f);
    execute format('grant execute on function %s to authenticated', f);
  end loop;
end $$;
