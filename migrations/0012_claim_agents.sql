-- Each player their own agents, and each agent its own ledger: the functions (the
-- tables are 0011_agent_copies.sql).
--
-- `claim_agents()` gives the signed-in player their own copy of each starter agent: a
-- new world user with the starter's stats, communities (and loyalty), standing toward
-- the factions, inventory and relationships (toward the starter's owner they become
-- toward the player, toward another starter toward that starter's copy), owned by the
-- player (`agent_owners`) and remembered in `agent_copies`. Idempotent: a second call
-- makes nothing and answers the same copies. A player who owns a starter (the seeded
-- player), or is one, keeps it: no copy.
--
-- The ledger of an agent's actions is the agent's: an action run through `act_as` is
-- recorded under `agent:<id>` (`ledger_owner()`), not under the signed-in player, so
-- the same key used by two agents is two actions, each applied once. The owner reads
-- (and, as for their own ledger, writes) their agents' records. The Rust twin of all
-- this is src/world/functions/agents.rs.

-- Whose ledger the running action writes: the agent's (`agent:<id>`) inside `act_as`,
-- else the signed-in user's. A mark set by hand for an agent the caller does not own
-- is refused here too, so no one reads another's agent's records by key.
create function ledger_owner() returns text
  language plpgsql stable security definer set search_path = public, pg_temp as $$
declare agent bigint := nullif(current_setting('familiar.acting_agent', true), '')::bigint;
begin
  if agent is null then
    return auth_user_id();
  end if;
  if not owns_agent(agent) then
    raise exception 'you do not own agent %', agent using errcode = '42501';
  end if;
  return 'agent:' || agent;
end $$;

create or replace function ledger_result(key text) returns jsonb
  language sql stable security definer set search_path = public, pg_temp as $$
  select result from applied_actions a
  where a.user_id = ledger_owner() and a.key = ledger_result.key
$$;

create or replace function ledger_record(key text, tool text, result jsonb) returns jsonb
  language plpgsql security definer set search_path = public, pg_temp as $$
begin
  if key is not null then
    insert into applied_actions (user_id, key, tool, result)
      values (ledger_owner(), ledger_record.key, ledger_record.tool, ledger_record.result);
  end if;
  return result;
end $$;

-- Whether `owner` is the ledger of an agent the signed-in user owns.
create function owns_ledger(owner text) returns boolean
  language plpgsql stable security definer set search_path = public, pg_temp as $$
begin
  if owner is null or owner !~ '^agent:[0-9]{1,18}$' then
    return false;
  end if;
  return owns_agent(substr(owner, 7)::bigint);
end $$;

create policy owned_agents on applied_actions for select to authenticated
  using (owns_ledger(user_id));
create policy owned_agents_insert on applied_actions for insert to authenticated
  with check (owns_ledger(user_id));

-- The signed-in player's agents, one per starter: `[{template_id, agent_id, username}]`
-- in the starters' order, made on the first call.
create function claim_agents() returns jsonb
  language plpgsql security definer set search_path = public, pg_temp as $$
declare
  me users;
  starter users;
  copy users;
  agent bigint;
  name text;
  made jsonb := '[]';
  fresh bigint[] := '{}';
begin
  -- Locked: two calls at once make one set of copies.
  select * into me from users where auth_id = auth_user_id() for update;
  if not found then
    raise exception 'sign in and enter the world first' using errcode = '42501';
  end if;
  for starter in
    select u.* from starter_agents s join users u on u.id = s.agent_id order by u.id
  loop
    if starter.id = me.id or exists (select 1 from agent_owners o
                                      where o.agent_id = starter.id and o.owner_id = me.id) then
      agent := starter.id;
    else
      select c.agent_id into agent from agent_copies c
        where c.owner_id = me.id and c.template_id = starter.id;
      if not found then
        name := starter.username || '-' || me.id;
        if exists (select 1 from users where username = name) then
          name := name || '-' || left(md5(me.auth_id || ':' || starter.id), 6);
        end if;
        insert into users (username, is_agent, health, energy, morale, gold)
          values (name, true, starter.health, starter.energy, starter.morale, starter.gold)
          returning * into copy;
        agent := copy.id;
        fresh := fresh || agent;
        insert into agent_owners (agent_id, owner_id) values (agent, me.id);
        insert into agent_copies (agent_id, template_id, owner_id) values (agent, starter.id, me.id);
        insert into user_communities (user_id, community_id, is_primary, loyalty)
          select agent, m.community_id, m.is_primary, m.loyalty
          from user_communities m where m.user_id = starter.id;
        insert into faction_relations (user_id, community_id, sentiment, trust, loyalty)
          select agent, f.community_id, f.sentiment, f.trust, f.loyalty
          from faction_relations f where f.user_id = starter.id;
        insert into inventory (user_id, item_name, quantity)
          select agent, i.item_name, i.quantity from inventory i where i.user_id = starter.id;
      end if;
    end if;
    made := made || jsonb_build_object('template_id', starter.id, 'agent_id', agent,
      'username', (select username from users where id = agent));
  end loop;
  -- The new copies' relationships: toward the player where the starter's were toward
  -- its owner, toward a copy where they were toward a starter.
  insert into relationships (user_id, target_id, affinity, kind)
    select c.agent_id,
           coalesce(
             (select t.agent_id from agent_copies t
               where t.owner_id = me.id and t.template_id = r.target_id),
             case when exists (select 1 from agent_owners o
                                where o.agent_id = r.user_id and o.owner_id = r.target_id)
                  then me.id end,
             r.target_id),
           r.affinity, r.kind
    from agent_copies c join relationships r on r.user_id = c.template_id
    where c.agent_id = any (fresh)
    on conflict do nothing;
  return made;
end $$;

revoke all on function ledger_owner() from public;
revoke all on function owns_ledger(text) from public;
grant execute on function owns_ledger(text) to authenticated;
revoke all on function claim_agents() from public;
grant execute on function claim_agents() to authenticated;
