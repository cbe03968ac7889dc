-- What a player can no longer do through the database (issue 22). Under Supabase's
-- default grants every table and function is open to anon and authenticated, so each
-- rule below is checked where the write happens, never by a missing grant:
--   * posting in a community and voting on its proposals need membership of it, and a
--     fighter cannot change sides by changing communities;
--   * the guild's tick is the game's own (a role that bypasses row-level security:
--     Supabase's service_role, a cron job as the owner), never a player's;
--   * every free-text column a player writes, directly or through a function, has a
--     size cap, refused in the words `checked_text` uses;
--   * no cycle of work, buy and eat makes gold (see `gold_loop` for the proof), and no
--     change to the jobs or the market can bring one back.
-- The local store's twin of the functions is src/world/functions/; a change to a rule
-- is made in both. Apply after 0005_seed.sql when the demo's seed is wanted: this
-- migration mends the seed's bread.

-- Posting in a community needs membership; a post to no community stays open to all.
create or replace function create_post(content text, community_id bigint default null, key text default null)
  returns jsonb language plpgsql security definer set search_path = public, pg_temp as $$
#variable_conflict use_column
declare me users; body text; post posts;
begin
  if ledger_result(key) is not null then return ledger_result(key); end if;
  me := acting_user();
  body := checked_text(create_post.content, 'post', 2000);
  if create_post.community_id is not null then
    if not exists (select 1 from communities c where c.id = create_post.community_id) then
      raise exception 'there is no community %', create_post.community_id;
    end if;
    if not exists (select 1 from user_communities m
                   where m.user_id = me.id and m.community_id = create_post.community_id) then
      raise exception 'you are not a member of community %', create_post.community_id;
    end if;
  end if;
  insert into posts (author_id, community_id, content)
    values (me.id, create_post.community_id, body) returning * into post;
  return ledger_record(key, 'create_post', to_jsonb(post));
end $$;

-- Voting on a proposal needs membership of its community.
create or replace function vote_on_proposal(proposal_id bigint, in_favour boolean, key text default null)
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
  if not exists (select 1 from user_communities m
                 where m.user_id = me.id and m.community_id = proposal.community_id) then
    raise exception 'you are not a member of community %', proposal.community_id;
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

-- A fighter keeps their side: one who fought for one side, then left for a community
-- on the other, no longer adds damage to both (their row kept the first side while
-- the battle counted the second).
create or replace function join_battle(battle_id bigint, energy integer, key text default null)
  returns jsonb language plpgsql security definer set search_path = public, pg_temp as $$
#variable_conflict use_column
declare me users; amount integer; battle battles; fighting_side integer; fought_side integer;
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
  select p.side into fought_side from battle_participants p
    where p.battle_id = battle.id and p.user_id = me.id;
  if fought_side is not null and fought_side <> fighting_side then
    raise exception 'you fight for side % of battle %; you cannot change sides', fought_side, battle.id;
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

-- The guild's tick is the game's: SECURITY INVOKER, so it writes only what its caller
-- may write, and it refuses any caller that does not bypass row-level security (anon
-- and authenticated, whatever they are granted). The game runs it as Supabase's
-- service_role, or as the owner from a cron job. It has no world user, so no ledger:
-- run each tick from one place.
drop function guild_tick(text);
create function guild_tick()
  returns jsonb language plpgsql security invoker set search_path = public, pg_temp as $$
declare latest game_state; effects record; next_state game_state; applied integer;
begin
  if not exists (select 1 from pg_roles r
                 where r.rolname = current_user and (r.rolsuper or r.rolbypassrls))
     and not exists (select 1 from pg_tables t
                     where t.schemaname = 'public' and t.tablename = 'game_state'
                       and t.tableowner = current_user) then
    raise exception 'only the game runs the guild''s tick' using errcode = '42501';
  end if;
  select * into latest from game_state order by tick desc limit 1 for update;
  if not found then
    raise exception 'the guild has no state yet';
  end if;
  select coalesce(sum((p.effects ->> 'gold')::integer) filter (where jsonb_typeof(p.effects -> 'gold') = 'number'), 0) as gold,
         coalesce(sum((p.effects ->> 'food')::integer) filter (where jsonb_typeof(p.effects -> 'food') = 'number'), 0) as food,
         coalesce(sum((p.effects ->> 'morale')::integer) filter (where jsonb_typeof(p.effects -> 'morale') = 'number'), 0) as morale
    into effects
    from guild_proposals p where p.state_id = latest.id and p.status = 'accepted';
  insert into game_state (tick, gold, food, morale)
    values (latest.tick + 1, greatest(0, latest.gold + effects.gold),
            greatest(0, latest.food + effects.food), clamped_stat(latest.morale + effects.morale))
    returning * into next_state;
  update guild_proposals set status = 'applied' where state_id = latest.id and status = 'accepted';
  get diagnostics applied = row_count;
  return jsonb_build_object('tick', next_state.tick, 'gold', next_state.gold,
    'food', next_state.food, 'morale', next_state.morale, 'applied', applied);
end $$;
revoke all on function guild_tick() from public, anon, authenticated;
do $$
begin
  if exists (select 1 from pg_roles where rolname = 'service_role') then
    grant execute on function guild_tick() to service_role;
  end if;
end $$;

-- Size caps. A row trigger with (column, what, most characters) triples: a string is
-- measured in characters, anything else (JSON) by its JSON text. The functions check
-- the same caps first with `checked_text`; this is what holds for direct writes
-- (memories, the ledger, transactions) and for any function written later.
create function refuse_oversized() returns trigger
  language plpgsql set search_path = public, pg_temp as $$
declare
  fields jsonb := to_jsonb(new);
  i integer := 0;
  value jsonb;
  size integer;
begin
  while i + 2 < tg_nargs loop
    value := fields -> tg_argv[i];
    size := case jsonb_typeof(value)
      when 'string' then length(value #>> '{}')
      when 'null' then 0
      else coalesce(length(value::text), 0) end;
    if size > tg_argv[i + 2]::integer then
      raise exception 'the % is % characters; at most %', tg_argv[i + 1], size, tg_argv[i + 2];
    end if;
    i := i + 3;
  end loop;
  return new;
end $$;

create trigger size_caps before insert or update on memories for each row
  execute function refuse_oversized('content', 'memory', '2000');
create trigger size_caps before insert or update on posts for each row
  execute function refuse_oversized('content', 'post', '2000');
create trigger size_caps before insert or update on messages for each row
  execute function refuse_oversized('content', 'message', '2000');
create trigger size_caps before insert or update on proposals for each row
  execute function refuse_oversized('title', 'title', '200');
create trigger size_caps before insert or update on users for each row
  execute function refuse_oversized('username', 'username', '64');
create trigger size_caps before insert or update on transactions for each row
  execute function refuse_oversized('character', 'character', '100',
    'transaction_type', 'transaction type', '100', 'state', 'state', '100',
    'context', 'context as JSON', '4000');
create trigger size_caps before insert or update on applied_actions for each row
  execute function refuse_oversized('key', 'key', '256', 'tool', 'tool name', '100',
    'result', 'result as JSON', '16000');

-- The economy. Gold comes from work alone (pay for energy); energy comes back from
-- items alone (bought with gold); nothing else moves either, between users or into
-- gold. Let r be the most any job pays per energy (pay / energy_cost). If every
-- available item that restores energy costs at least r per energy it restores, then
--   P = gold + r * energy + sum over the inventory of r * (energy the item restores)
-- never grows: work adds pay and takes r * energy_cost >= pay; buying takes the price
-- and adds r * energy <= price; eating swaps the item's share for at most that much
-- energy (the 0-100 clamp only loses); fighting only spends energy. So across any
-- sequence of actions gold <= P at the start, and any cycle (one that ends where it
-- began in energy and inventory) nets gold <= 0. `gold_loop` names a job and item
-- that break the premise (or a job that pays for no energy), or nothing.
create function gold_loop() returns text
  language sql stable set search_path = public, pg_temp as $$
  select coalesce(
    (select format('%s pays %s gold for no energy', j.name, j.pay)
       from jobs j where j.pay > 0 and j.energy_cost = 0 order by j.name limit 1),
    (select format('%s pays %s gold for %s energy, and %s restores %s energy for %s gold: '
                   'work, buy and eat would make gold',
                   j.name, j.pay, j.energy_cost, i.name, i.effects ->> 'energy', i.price)
       from jobs j, market_items i
       where i.available and jsonb_typeof(i.effects -> 'energy') = 'number'
         and (i.effects ->> 'energy')::numeric > 0
         and i.price::numeric * j.energy_cost < j.pay::numeric * (i.effects ->> 'energy')::numeric
       order by j.name, i.name limit 1))
$$;

create function refuse_gold_loop() returns trigger
  language plpgsql set search_path = public, pg_temp as $$
declare loop_found text := gold_loop();
begin
  if loop_found is not null then
    raise exception '%', loop_found;
  end if;
  return null;
end $$;

-- The seed's bread (3 gold, 10 energy) against farming (30 gold for 10 energy) made
-- 27 gold a cycle; a loaf now restores 1 energy, so no cycle makes any.
update market_items set effects = '{"energy": 1}'
  where name = 'bread' and price = 3 and effects = '{"energy": 10}';

create trigger no_gold_loop after insert or update on jobs
  for each statement execute function refuse_gold_loop();
create trigger no_gold_loop after insert or update on market_items
  for each statement execute function refuse_gold_loop();

do $$
begin
  if gold_loop() is not null then
    raise exception 'the jobs and the market make gold from nothing: %', gold_loop();
  end if;
end $$;

revoke all on function refuse_oversized(), refuse_gold_loop() from public;
