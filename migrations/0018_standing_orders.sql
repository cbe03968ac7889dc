-- Standing orders (issue 56): what an owner lets their agent do unasked, held by the
-- database too, so a shared world keeps the same bounds the engine keeps whoever calls
-- `act_as` (a page whose engine was talked round, or a hand-made request).
--
-- One JSON object per agent, set by its owner only (`set_standing_orders`):
--   {"actions": ["do_work", "buy_item", …],   the actions `act_as` may run for it
--    "gold_per_day": N,                         gold it may spend in any 24 hours
--    "energy_per_day": N,                       energy it may spend in any 24 hours
--    "communities": [community ids],            where it may post, join, leave,
--                                               propose, vote or abstain
--    "battles": [battle ids],                   where it may fight or stand aside
--    "message": [user ids or usernames]}        whom it may message or answer
-- Every key may be absent, and is then no bound on its dimension (`actions` absent:
-- any action); no row, or orders set to null, is no bound at all. Spending is what
-- the call took from the agent's gold and energy (earning and eating are not
-- spending), measured around the call, and counted over the last 24 hours. A post to
-- no community is outside any `communities` list.
--
-- The orders bind the agent acting through `act_as`; its owner's own calls are theirs.
-- A call outside them is refused before it runs (action, community, battle,
-- recipient) or rolled back after (gold, energy), with a P0001 sentence naming the
-- agent, the bound and what is left. `act_as` takes the agent's row first (FOR NO KEY
-- UPDATE, as `acting_user` does), so two calls of one agent measure one after the
-- other; an agent's actions all come through `act_as`, so its ledger key's lock
-- (0015) always comes after its row.

create table standing_orders (
  agent_id bigint primary key references agent_owners (agent_id) on delete cascade,
  orders jsonb not null,
  set_at timestamptz not null default now()
);

-- The owner reads their agents' orders; only `set_standing_orders` writes them.
alter table standing_orders enable row level security;
revoke all on standing_orders from anon, authenticated;
grant select on standing_orders to authenticated;
create policy owned_agents on standing_orders for select to authenticated
  using (exists (select 1 from agent_owners o
                 where o.agent_id = standing_orders.agent_id and o.owner_id = world_user()));

-- What the orders let an agent spend: one row per call that took gold or energy.
create table agent_spending (
  agent_id bigint not null references users (id) on delete cascade,
  gold integer not null,
  energy integer not null,
  spent_at timestamptz not null default now()
);
create index agent_spending_by_agent on agent_spending (agent_id, spent_at);
alter table agent_spending enable row level security;
revoke all on agent_spending from anon, authenticated;

-- The actions `act_as` runs (0009's list, named once here).
create function agent_actions() returns text[]
  language sql immutable set search_path = public, pg_temp as $$
  select array['send_message', 'reply_to_message', 'create_post', 'join_battle',
    'ignore_battle', 'buy_item', 'consume_item', 'do_work', 'join_community',
    'leave_community', 'vote_on_proposal', 'abstain_from_vote', 'create_proposal']
$$;

-- `orders` checked against the shape above, or a refusal saying what is wrong.
create function checked_orders(orders jsonb) returns jsonb
  language plpgsql immutable set search_path = public, pg_temp as $$
declare field text; item jsonb;
begin
  if jsonb_typeof(orders) <> 'object' then
    raise exception 'standing orders are a JSON object, not %', jsonb_typeof(orders);
  end if;
  for field in select jsonb_object_keys(orders) loop
    case field
      when 'gold_per_day', 'energy_per_day' then
        if jsonb_typeof(orders -> field) <> 'number' or (orders ->> field)::numeric < 0
           or (orders ->> field)::numeric <> floor((orders ->> field)::numeric)
           or (orders ->> field)::numeric > 1000000 then
          raise exception 'standing orders'' % is a whole number from 0 to 1000000, not %', field, orders -> field;
        end if;
      when 'actions', 'communities', 'battles', 'message' then
        if jsonb_typeof(orders -> field) <> 'array' or jsonb_array_length(orders -> field) > 100 then
          raise exception 'standing orders'' % is a list of at most 100, not %', field, orders -> field;
        end if;
        for item in select jsonb_array_elements(orders -> field) loop
          if field = 'actions' and (jsonb_typeof(item) <> 'string' or not (item #>> '{}') = any (agent_actions())) then
            raise exception 'standing orders'' actions are among %, not %', array_to_string(agent_actions(), ', '), item;
          elsif field in ('communities', 'battles') and (jsonb_typeof(item) <> 'number' or (item #>> '{}') !~ '^[0-9]{1,18}$') then
            raise exception 'standing orders'' % are ids, not %', field, item;
          elsif field = 'message' and not (jsonb_typeof(item) = 'string' and length(item #>> '{}') between 1 and 64
                                           or jsonb_typeof(item) = 'number' and (item #>> '{}') ~ '^[0-9]{1,18}$') then
            raise exception 'standing orders'' message list holds user ids or usernames, not %', item;
          end if;
        end loop;
      else
        raise exception 'standing orders have no %; they have actions, gold_per_day, energy_per_day, communities, battles and message', field;
    end case;
  end loop;
  return orders;
end $$;

-- Sets (or, with null, lifts) the standing orders of an agent the signed-in player
-- owns; answers them as kept.
create function set_standing_orders(agent bigint, orders jsonb) returns jsonb
  language plpgsql security definer set search_path = public, pg_temp as $$
declare kept jsonb;
begin
  if world_user() is null then
    raise exception 'sign in and enter the world first' using errcode = '42501';
  end if;
  if not exists (select 1 from agent_owners o where o.agent_id = agent and o.owner_id = world_user()) then
    raise exception 'you do not own agent %', agent using errcode = '42501';
  end if;
  if orders is null or jsonb_typeof(orders) = 'null' then
    delete from standing_orders s where s.agent_id = agent;
    return null;
  end if;
  kept := checked_orders(orders);
  insert into standing_orders (agent_id, orders) values (agent, kept)
    on conflict (agent_id) do update set orders = excluded.orders, set_at = now();
  return kept;
end $$;

-- Whether `list` (a JSON array) holds `id`, or `name` when given.
create function listed(list jsonb, id bigint, name text default null) returns boolean
  language sql immutable set search_path = public, pg_temp as $$
  select list @> to_jsonb(id) or (name is not null and list @> to_jsonb(name))
$$;

-- Refuses `action` with `args` for `agent` when its standing orders do not allow it.
create function obey_orders(agent bigint, action text, args jsonb) returns void
  language plpgsql stable security definer set search_path = public, pg_temp as $$
declare
  orders jsonb := (select s.orders from standing_orders s where s.agent_id = agent);
  who text := (select u.username from users u where u.id = agent);
  community bigint;
  recipient users;
begin
  if orders is null then
    return;
  end if;
  if orders ? 'actions' and not (orders -> 'actions') ? action then
    raise exception '%''s standing orders do not let it %; they allow %', who, action,
      coalesce((select string_agg(a, ', ') from jsonb_array_elements_text(orders -> 'actions') a), 'no action')
      using errcode = 'P0001';
  end if;
  if orders ? 'communities' and action in ('create_post', 'join_community', 'leave_community',
      'create_proposal', 'vote_on_proposal', 'abstain_from_vote') then
    community := case
      when action in ('vote_on_proposal', 'abstain_from_vote') then
        (select p.community_id from proposals p where p.id = (args ->> 'proposal_id')::bigint)
      else (args ->> 'community_id')::bigint end;
    if community is null or not listed(orders -> 'communities', community) then
      raise exception '%''s standing orders keep it to communities %; % is not one of them', who,
        (select string_agg(c, ', ') from jsonb_array_elements_text(orders -> 'communities') c),
        coalesce((select format('%s (%s)', c.name, c.id) from communities c where c.id = community), 'no community')
        using errcode = 'P0001';
    end if;
  end if;
  if orders ? 'battles' and action in ('join_battle', 'ignore_battle')
     and not listed(orders -> 'battles', (args ->> 'battle_id')::bigint) then
    raise exception '%''s standing orders keep it to battles %; battle % is not one of them', who,
      (select string_agg(b, ', ') from jsonb_array_elements_text(orders -> 'battles') b),
      args ->> 'battle_id' using errcode = 'P0001';
  end if;
  if orders ? 'message' and action in ('send_message', 'reply_to_message') then
    if action = 'send_message' then
      select * into recipient from users u where u.id = (args ->> 'user_id')::bigint;
    else
      select * into recipient from users u where u.id = (
        select case when m.sender_id = agent then m.receiver_id else m.sender_id end
        from messages m where m.id = (args ->> 'message_id')::bigint);
    end if;
    if recipient.id is null or not listed(orders -> 'message', recipient.id, recipient.username) then
      raise exception '%''s standing orders let it message only %; % is not one of them', who,
        (select string_agg(m, ', ') from jsonb_array_elements_text(orders -> 'message') m),
        coalesce(recipient.username, 'that user') using errcode = 'P0001';
    end if;
  end if;
end $$;

-- Counts what a call took from `agent` (gold and energy it had `before`) against its
-- standing orders' daily gold and energy, or refuses the call (it then rolls back).
create function spend_within_orders(agent bigint, before users) returns void
  language plpgsql security definer set search_path = public, pg_temp as $$
declare
  orders jsonb := (select s.orders from standing_orders s where s.agent_id = agent);
  after users;
  spent record;
  resource text;
  most bigint;
begin
  select * into after from users u where u.id = agent;
  if orders is null or (after.gold >= before.gold and after.energy >= before.energy) then
    return;
  end if;
  insert into agent_spending (agent_id, gold, energy)
    values (agent, greatest(0, before.gold - after.gold), greatest(0, before.energy - after.energy));
  select coalesce(sum(s.gold), 0) as gold, coalesce(sum(s.energy), 0) as energy,
         min(s.spent_at) as oldest into spent
    from agent_spending s where s.agent_id = agent and s.spent_at > now() - interval '1 day';
  foreach resource in array array['gold', 'energy'] loop
    most := (orders ->> (resource || '_per_day'))::bigint;
    if most is not null and (case resource when 'gold' then spent.gold else spent.energy end) > most then
      raise exception '%''s standing orders let it spend % % a day, and % of it is left; more comes back after %',
        after.username, most, resource,
        greatest(0, most - (case resource when 'gold' then spent.gold - (before.gold - after.gold)
                                          else spent.energy - (before.energy - after.energy) end)),
        said_time(spent.oldest + interval '1 day') using errcode = 'P0001';
    end if;
  end loop;
end $$;

-- 0009's `act_as`, within the agent's standing orders.
create or replace function act_as(agent bigint, action text, args jsonb default '{}', key text default null)
  returns jsonb language plpgsql security definer set search_path = public, pg_temp as $$
declare call text; result jsonb; before users;
begin
  if world_user() is null then
    raise exception 'sign in and enter the world first' using errcode = '42501';
  end if;
  if not owns_agent(agent) then
    raise exception 'you do not own agent %', agent using errcode = '42501';
  end if;
  if action is null or not action = any (agent_actions()) then
    raise exception 'there is no action %', action;
  end if;
  if jsonb_typeof(coalesce(args, '{}')) <> 'object' then
    raise exception 'the arguments of % must be an object', action;
  end if;
  select * into before from users u where u.id = agent for no key update;
  perform obey_orders(agent, action, coalesce(args, '{}'));
  select string_agg(format('%I => %L', a.name, a.value), ', ' order by a.name)
    into call
    from jsonb_each_text(coalesce(args, '{}') - 'key') a(name, value);
  call := concat_ws(', ', call, format('key => %L', key));
  perform set_config('familiar.acting_agent', agent::text, true);
  execute format('select %I(%s)', action, call) into result;
  perform set_config('familiar.acting_agent', '', true);
  perform spend_within_orders(agent, before);
  return result;
end $$;

revoke all on function agent_actions(), checked_orders(jsonb), listed(jsonb, bigint, text),
  obey_orders(bigint, text, jsonb), spend_within_orders(bigint, users)
  from public, anon, authenticated;
revoke all on function set_standing_orders(bigint, jsonb) from public, anon;
grant execute on function set_standing_orders(bigint, jsonb) to authenticated;
