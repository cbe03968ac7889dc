-- Seed 000's world played by several agents, each acting as itself.
--
-- Agents a player owns: `agent_owners` says which world user (an agent) a player's world
-- user may act as. Only the game writes it (no policy lets a player). `act_as(agent,
-- action, args, key)` runs one action function as that agent: it checks the caller owns
-- the agent, marks the agent as the acting user for this transaction only, and calls the
-- action by name with `args`; every action function finds its actor through
-- `acting_user()`, redefined here to honour the mark and to check the ownership again,
-- so no other way of setting it lets a player act as an agent that is not theirs. The
-- ledger stays the signed-in player's (their keys, their record of what was applied).
-- The owner also reads their agents' private rows (inventory, relationships, messages,
-- memories), which the agents' look-ups need.
--
-- `knowledge` is what `search_knowledge` reads; `faction_relations` what
-- `get_faction_relationship` reads. `ignore_battle` records an agent's choice to stay out of a battle in the ledger and
-- changes no row. The Rust twin of all this is src/world/functions/.

-- What the world knows of itself: rules and lore the agents look up (`search_knowledge`).
create table knowledge (
  id bigint generated always as identity primary key,
  topic text not null,
  content text not null
);

alter table knowledge enable row level security;
grant select on knowledge to anon, authenticated;
create policy public_read on knowledge for select to anon, authenticated using (true);

insert into knowledge (id, topic, content) overriding system value values
  (1, 'battles', 'A battle is fought between two communities; each fighter spends energy, and the energy spent is their damage.'),
  (2, 'market', 'Food restores energy, ale lifts morale, a healing draught restores health. Prices are in gold.'),
  (3, 'work', 'Jobs pay gold for energy: mining pays most and tires most; farming is the gentlest.'),
  (4, 'lore', 'The Lantern Guild keeps the tavern road; the Ashen Circle holds the hill.');
select setval(pg_get_serial_sequence('knowledge', 'id'), 4);

-- How a user stands toward a faction (a community): sentiment (-100 to 100), trust and
-- loyalty (0 to 100). Only the game writes it; a user reads their own rows.
create table faction_relations (
  user_id bigint not null references users (id) on delete cascade,
  community_id bigint not null references communities (id) on delete cascade,
  sentiment integer not null default 0 check (sentiment between -100 and 100),
  trust integer not null default 50 check (trust between 0 and 100),
  loyalty integer not null default 0 check (loyalty between 0 and 100),
  primary key (user_id, community_id)
);

alter table faction_relations enable row level security;
grant select on faction_relations to authenticated;
create policy own_rows on faction_relations for select to authenticated
  using (user_id = world_user());

insert into faction_relations (user_id, community_id, sentiment, trust, loyalty) values
  (1, 1, 70, 80, 85), (1, 2, -40, 20, 0),
  (2, 2, 60, 70, 75), (2, 1, -50, 10, 0),
  (4, 2, -20, 30, 20), (4, 1, 10, 40, 15);

-- Governance as the seed has it: a member may abstain on a proposal rather than vote
-- (`abstain_from_vote`), and a proposal may carry a description (`create_proposal` with
-- `description`).
create table abstentions (
  proposal_id bigint not null references proposals (id) on delete cascade,
  user_id bigint not null references users (id) on delete cascade,
  primary key (proposal_id, user_id)
);

create table proposal_descriptions (
  proposal_id bigint primary key references proposals (id) on delete cascade,
  description text not null
);

alter table abstentions enable row level security;
alter table proposal_descriptions enable row level security;
grant select on abstentions, proposal_descriptions to anon, authenticated;
create policy public_read on abstentions for select to anon, authenticated using (true);
create policy public_read on proposal_descriptions for select to anon, authenticated using (true);

create table agent_owners (
  agent_id bigint primary key references users (id) on delete cascade,
  owner_id bigint not null references users (id) on delete cascade
);

alter table agent_owners enable row level security;
grant select on agent_owners to anon, authenticated;
create policy public_read on agent_owners for select to anon, authenticated using (true);

-- The seeded player (3) owns the page's agents: Dotty, Brannoc and Mira; Mira, tired
-- and penniless, has to work before she can eat (seed 000's third example).
insert into agent_owners (agent_id, owner_id) values (1, 3), (2, 3), (4, 3);
update users set gold = 0 where id = 4 and username = 'mira';

-- Whether the signed-in user's world user owns (or is) world user `agent`.
create function owns_agent(agent bigint) returns boolean
  language sql stable security definer set search_path = public, pg_temp as $$
  select agent = world_user()
    or exists (select 1 from agent_owners o where o.agent_id = agent and o.owner_id = world_user())
$$;

create or replace function acting_user() returns users
  language plpgsql security definer set search_path = public, pg_temp as $$
declare me users; agent bigint := nullif(current_setting('familiar.acting_agent', true), '')::bigint;
begin
  if agent is null then
    select * into me from users where auth_id = auth_user_id() for update;
    if not found then
      raise exception 'sign in and enter the world first' using errcode = '42501';
    end if;
    return me;
  end if;
  if not owns_agent(agent) then
    raise exception 'you do not own agent %', agent using errcode = '42501';
  end if;
  select * into me from users where id = agent for update;
  if not found then
    raise exception 'there is no user %', agent;
  end if;
  return me;
end $$;

create function ignore_battle(battle_id bigint, key text default null)
  returns jsonb language plpgsql security definer set search_path = public, pg_temp as $$
#variable_conflict use_column
declare me users; fought battles;
begin
  if ledger_result(key) is not null then return ledger_result(key); end if;
  me := acting_user();
  select * into fought from battles b where b.id = ignore_battle.battle_id;
  if not found then
    raise exception 'there is no battle %', ignore_battle.battle_id;
  end if;
  return ledger_record(key, 'ignore_battle',
    jsonb_build_object('battle_id', fought.id, 'ignored', true, 'energy', me.energy));
end $$;

create function abstain_from_vote(proposal_id bigint, key text default null)
  returns jsonb language plpgsql security definer set search_path = public, pg_temp as $$
#variable_conflict use_column
declare me users; proposal proposals; abstained abstentions;
begin
  if ledger_result(key) is not null then return ledger_result(key); end if;
  me := acting_user();
  select * into proposal from proposals p where p.id = abstain_from_vote.proposal_id;
  if not found then
    raise exception 'there is no proposal %', abstain_from_vote.proposal_id;
  end if;
  if not exists (select 1 from user_communities m
                 where m.user_id = me.id and m.community_id = proposal.community_id) then
    raise exception 'you are not a member of community %', proposal.community_id;
  end if;
  if proposal.status <> 'open' then
    raise exception 'proposal % is closed', proposal.id;
  end if;
  if exists (select 1 from votes v where v.proposal_id = proposal.id and v.user_id = me.id)
     or exists (select 1 from abstentions a where a.proposal_id = proposal.id and a.user_id = me.id) then
    raise exception 'you already voted on proposal %', proposal.id;
  end if;
  insert into abstentions (proposal_id, user_id) values (proposal.id, me.id)
    returning * into abstained;
  return ledger_record(key, 'abstain_from_vote', to_jsonb(abstained));
end $$;

-- A proposal with its description: the proposal as `create_proposal` makes it, and
-- the description beside it.
create function create_proposal(community_id bigint, title text, description text, key text default null)
  returns jsonb language plpgsql security definer set search_path = public, pg_temp as $$
#variable_conflict use_column
declare made jsonb; body text;
begin
  if ledger_result(key) is not null then return ledger_result(key); end if;
  body := checked_text(create_proposal.description, 'description', 2000);
  made := create_proposal(community_id => create_proposal.community_id,
                          title => create_proposal.title);
  insert into proposal_descriptions (proposal_id, description)
    values ((made ->> 'id')::bigint, body);
  return ledger_record(key, 'create_proposal', made || jsonb_build_object('description', body));
end $$;

-- Runs the action function `action` as `agent`, with `args` as its named arguments.
create function act_as(agent bigint, action text, args jsonb default '{}', key text default null)
  returns jsonb language plpgsql security definer set search_path = public, pg_temp as $$
declare call text; result jsonb;
begin
  if world_user() is null then
    raise exception 'sign in and enter the world first' using errcode = '42501';
  end if;
  if not owns_agent(agent) then
    raise exception 'you do not own agent %', agent using errcode = '42501';
  end if;
  if action not in ('send_message', 'reply_to_message', 'create_post', 'join_battle',
      'ignore_battle', 'buy_item', 'consume_item', 'do_work', 'join_community',
      'leave_community', 'vote_on_proposal', 'abstain_from_vote', 'create_proposal') then
    raise exception 'there is no action %', action;
  end if;
  if jsonb_typeof(coalesce(args, '{}')) <> 'object' then
    raise exception 'the arguments of % must be an object', action;
  end if;
  select string_agg(format('%I => %L', a.name, a.value), ', ' order by a.name)
    into call
    from jsonb_each_text(coalesce(args, '{}') - 'key') a(name, value);
  call := concat_ws(', ', call, format('key => %L', key));
  perform set_config('familiar.acting_agent', agent::text, true);
  execute format('select %I(%s)', action, call) into result;
  perform set_config('familiar.acting_agent', '', true);
  return result;
end $$;

-- The owner reads their agents' private rows, as the agents' look-ups need.
create policy owned_agents on relationships for select to authenticated
  using (owns_agent(user_id));
create policy owned_agents on inventory for select to authenticated
  using (owns_agent(user_id));
create policy owned_agents on messages for select to authenticated
  using (owns_agent(sender_id) or owns_agent(receiver_id));
create policy owned_agents on memories for select to authenticated
  using (owns_agent(user_id));
create policy owned_agents on faction_relations for select to authenticated
  using (owns_agent(user_id));

revoke all on function owns_agent(bigint) from public;
grant execute on function owns_agent(bigint) to authenticated;
revoke all on function ignore_battle(bigint, text) from public;
grant execute on function ignore_battle(bigint, text) to authenticated;
revoke all on function abstain_from_vote(bigint, text) from public;
grant execute on function abstain_from_vote(bigint, text) to authenticated;
revoke all on function create_proposal(bigint, text, text, text) from public;
grant execute on function create_proposal(bigint, text, text, text) to authenticated;
revoke all on function act_as(bigint, text, jsonb, text) from public;
grant execute on function act_as(bigint, text, jsonb, text) to authenticated;
