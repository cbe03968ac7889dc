-- The guild council of seed 001, one guild per player: its resources, the proposals its
-- agent drafts and the oracle scries, the player's decrees, and a tick that applies the
-- accepted proposals once and the natural pressures every time, recording the history.
--
-- Per player, not one shared guild: the council is a single-player game, and a shared
-- guild would let any signed-in user decide and tick everyone's game (0002's
-- `guild_tick` had to be the game's alone for that reason). Owned by the sign-in
-- (`auth_user_id()`, the JWT's `sub`), a player's guild is theirs to run: they read only
-- their own rows, and change them only through the functions below, which check the
-- rules. The local store plays the same rules in Rust (src/guild/rules.rs); the
-- conformance suite compares the two.
--
-- Resources and their bounds (every value clamped into them, never refused):
--   gold       0-9999  the treasury: wages are paid from it
--   food       0-999   the stores: the guild eats every tick
--   morale     0-100   the members' spirit: hunger and unpaid wages sap it
--   influence  0-100   standing in the town: it fades unless tended
-- A tick: the accepted proposals' deltas are added and clamped, then the natural
-- pressures of seed 001 act, each clamped again: food -10 (the guild eats), gold -5
-- (wages), influence -2 (standing fades), and morale -10 when fewer than 10 food were
-- left to eat (hunger) and -5 when fewer than 5 gold were left for wages (unpaid).
--
-- This replaces 0002's shared `game_state`, `guild_proposals` and the game-run
-- `guild_tick()`, which nothing called.

drop function if exists guild_tick();
drop table if exists guild_proposals;
drop table if exists game_state;

create table guilds (
  owner text primary key,
  tick integer not null default 0 check (tick >= 0),
  gold integer not null default 100 check (gold between 0 and 9999),
  food integer not null default 80 check (food between 0 and 999),
  morale integer not null default 55 check (morale between 0 and 100),
  influence integer not null default 10 check (influence between 0 and 100),
  created_at timestamptz not null default now()
);

create table guild_proposals (
  id bigint generated always as identity primary key,
  owner text not null references guilds (owner) on delete cascade,
  tick integer not null,
  title text not null,
  description text not null default '',
  predicted_delta jsonb not null default '{}',
  risk_note text,
  status text not null default 'pending'
    check (status in ('pending', 'accepted', 'rejected', 'applied')),
  applied_tick integer,
  created_at timestamptz not null default now()
);

create table guild_history (
  owner text not null references guilds (owner) on delete cascade,
  tick integer not null,
  gold integer not null,
  food integer not null,
  morale integer not null,
  influence integer not null,
  applied jsonb not null default '[]',
  pressures jsonb not null default '{}',
  created_at timestamptz not null default now(),
  primary key (owner, tick)
);

alter table guilds enable row level security;
alter table guild_proposals enable row level security;
alter table guild_history enable row level security;
revoke all on guilds, guild_proposals, guild_history from anon, authenticated;
grant select on guilds, guild_proposals, guild_history to authenticated;
create policy own_guild on guilds for select to authenticated
  using (owner = auth_user_id());
create policy own_guild on guild_proposals for select to authenticated
  using (owner = auth_user_id());
create policy own_guild on guild_history for select to authenticated
  using (owner = auth_user_id());

-- A resource's value clamped into its bounds.
create function guild_clamp(resource text, value bigint) returns integer
  language sql immutable set search_path = public, pg_temp as $$
  select greatest(0, least(case resource when 'gold' then 9999 when 'food' then 999
                                         else 100 end, value))::integer
$$;

-- The caller's guild, locked for the rest of the transaction, or a refusal.
create function acting_guild() returns guilds
  language plpgsql security definer set search_path = public, pg_temp as $$
declare g guilds;
begin
  if auth_user_id() is null then
    raise exception 'sign in first' using errcode = '42501';
  end if;
  select * into g from guilds where owner = auth_user_id() for update;
  if not found then
    raise exception 'open your guild first';
  end if;
  return g;
end $$;

-- A delta: an object of whole numbers from -1000 to 1000 for known resources; the
-- numbers come back as integers (5.0 is 5).
create function checked_delta(delta jsonb) returns jsonb
  language plpgsql immutable set search_path = public, pg_temp as $$
declare item record;
begin
  if delta is null or jsonb_typeof(delta) <> 'object' then
    raise exception 'the predicted delta must be an object of resources';
  end if;
  for item in select * from jsonb_each(delta) order by key loop
    if item.key not in ('gold', 'food', 'morale', 'influence') then
      raise exception 'there is no resource %', item.key;
    end if;
    if jsonb_typeof(item.value) <> 'number' or (item.value #>> '{}')::numeric <> trunc((item.value #>> '{}')::numeric)
       or abs((item.value #>> '{}')::numeric) > 1000 then
      raise exception 'the change to % must be a whole number from -1000 to 1000', item.key;
    end if;
  end loop;
  return coalesce((select jsonb_object_agg(key, (value #>> '{}')::numeric::integer)
                   from jsonb_each(delta)), '{}');
end $$;

-- The caller's guild, founded at tick 0 on the first call (with its first history row).
create function guild_open() returns jsonb
  language plpgsql security definer set search_path = public, pg_temp as $$
declare g guilds;
begin
  if auth_user_id() is null then
    raise exception 'sign in first' using errcode = '42501';
  end if;
  select * into g from guilds where owner = auth_user_id();
  if not found then
    insert into guilds (owner) values (auth_user_id()) returning * into g;
    insert into guild_history (owner, tick, gold, food, morale, influence)
      values (g.owner, 0, g.gold, g.food, g.morale, g.influence);
  end if;
  return to_jsonb(g) - 'created_at';
end $$;

-- The council's drafts: 1 to 3 proposals, each a title (1-120 characters), a
-- description (1-1000) and a predicted delta; pending, at the current tick. At
-- most 6 proposals wait at once.
create function guild_propose(proposals jsonb) returns jsonb
  language plpgsql security definer set search_path = public, pg_temp as $$
declare g guilds; item jsonb; made jsonb := '[]'; row_made guild_proposals; waiting integer;
begin
  g := acting_guild();
  if proposals is null or jsonb_typeof(proposals) <> 'array'
     or jsonb_array_length(proposals) not between 1 and 3 then
    raise exception 'the council drafts 1 to 3 proposals at a time';
  end if;
  select count(*) into waiting from guild_proposals p
    where p.owner = g.owner and p.status = 'pending';
  if waiting + jsonb_array_length(proposals) > 6 then
    raise exception 'at most 6 proposals wait at once; % are waiting', waiting;
  end if;
  for item in select value from jsonb_array_elements(proposals) loop
    insert into guild_proposals (owner, tick, title, description, predicted_delta)
      values (g.owner, g.tick, checked_text(item ->> 'title', 'title', 120),
              checked_text(item ->> 'description', 'description', 1000),
              checked_delta(coalesce(item -> 'predicted_delta', '{}')))
      returning * into row_made;
    made := made || jsonb_build_array(to_jsonb(row_made) - 'created_at');
  end loop;
  return made;
end $$;

-- The caller's proposal `id`, locked, if it is still pending.
create function pending_proposal(id bigint) returns guild_proposals
  language plpgsql security definer set search_path = public, pg_temp as $$
declare p guild_proposals;
begin
  select * into p from guild_proposals gp
    where gp.id = pending_proposal.id and gp.owner = auth_user_id() for update;
  if not found then
    raise exception 'there is no proposal %', id;
  elsif p.status <> 'pending' then
    raise exception 'proposal % is already %', id, p.status;
  end if;
  return p;
end $$;

-- The oracle's forecast for a pending proposal: its predicted delta and a risk note
-- (1-300 characters).
create function guild_scry(proposal_id bigint, predicted_delta jsonb, risk_note text)
  returns jsonb language plpgsql security definer set search_path = public, pg_temp as $$
declare g guilds; p guild_proposals;
begin
  g := acting_guild();
  p := pending_proposal(proposal_id);
  update guild_proposals gp
    set predicted_delta = checked_delta(guild_scry.predicted_delta),
        risk_note = checked_text(guild_scry.risk_note, 'risk note', 300)
    where gp.id = p.id returning * into p;
  return to_jsonb(p) - 'created_at';
end $$;

-- The player's decree on a pending proposal: accepted or rejected.
create function guild_decide(proposal_id bigint, accept boolean) returns jsonb
  language plpgsql security definer set search_path = public, pg_temp as $$
declare g guilds; p guild_proposals;
begin
  g := acting_guild();
  p := pending_proposal(proposal_id);
  update guild_proposals gp
    set status = case when coalesce(accept, false) then 'accepted' else 'rejected' end
    where gp.id = p.id returning * into p;
  return to_jsonb(p) - 'created_at';
end $$;

-- One history row as the tick's answer.
create function history_answer(h guild_history, fresh boolean) returns jsonb
  language sql immutable set search_path = public, pg_temp as $$
  select (to_jsonb(h) - 'created_at' - 'owner') || jsonb_build_object('fresh', fresh)
$$;

-- The tick after `at_tick`, the tick the caller saw. Applied once: asked again for a
-- tick already taken (a retry, a second tab), it answers that tick's record and changes
-- nothing (`fresh` false). The guild row is locked, so two ticks at once run one after
-- the other and the second finds the first's work done.
create function guild_tick(at_tick integer) returns jsonb
  language plpgsql security definer set search_path = public, pg_temp as $$
declare
  g guilds; h guild_history; d record;
  new_gold integer; new_food integer; new_morale integer; new_influence integer;
  hungry boolean; unpaid boolean; sapped integer;
begin
  g := acting_guild();
  if at_tick is null or at_tick < 0 or at_tick > g.tick then
    raise exception 'the guild is at tick %, not %', g.tick, coalesce(at_tick::text, 'null');
  elsif at_tick < g.tick then
    select * into h from guild_history gh where gh.owner = g.owner and gh.tick = at_tick + 1;
    return history_answer(h, false);
  end if;
  select coalesce(sum((p.predicted_delta ->> 'gold')::integer), 0) as gold,
         coalesce(sum((p.predicted_delta ->> 'food')::integer), 0) as food,
         coalesce(sum((p.predicted_delta ->> 'morale')::integer), 0) as morale,
         coalesce(sum((p.predicted_delta ->> 'influence')::integer), 0) as influence,
         coalesce(jsonb_agg(p.id order by p.id) filter (where p.id is not null), '[]') as ids
    into d from guild_proposals p where p.owner = g.owner and p.status = 'accepted';
  new_gold := guild_clamp('gold', g.gold + d.gold);
  new_food := guild_clamp('food', g.food + d.food);
  new_morale := guild_clamp('morale', g.morale + d.morale);
  new_influence := guild_clamp('influence', g.influence + d.influence);
  hungry := new_food < 10;
  unpaid := new_gold < 5;
  sapped := (case when hungry then 10 else 0 end) + (case when unpaid then 5 else 0 end);
  new_gold := guild_clamp('gold', new_gold - 5);
  new_food := guild_clamp('food', new_food - 10);
  new_morale := guild_clamp('morale', new_morale - sapped);
  new_influence := guild_clamp('influence', new_influence - 2);
  update guild_proposals p set status = 'applied', applied_tick = g.tick + 1
    where p.owner = g.owner and p.status = 'accepted';
  update guilds set tick = g.tick + 1, gold = new_gold, food = new_food,
      morale = new_morale, influence = new_influence
    where guilds.owner = g.owner;
  insert into guild_history (owner, tick, gold, food, morale, influence, applied, pressures)
    values (g.owner, g.tick + 1, new_gold, new_food, new_morale, new_influence, d.ids,
            jsonb_build_object('gold', -5, 'food', -10, 'influence', -2, 'morale', -sapped,
                               'hungry', hungry, 'unpaid', unpaid))
    returning * into h;
  return history_answer(h, true);
end $$;

revoke all on function guild_clamp(text, bigint), acting_guild(), checked_delta(jsonb),
  guild_open(), guild_propose(jsonb), pending_proposal(bigint),
  guild_scry(bigint, jsonb, text), guild_decide(bigint, boolean),
  history_answer(guild_history, boolean), guild_tick(integer)
  from public, anon;
grant execute on function guild_open(), guild_propose(jsonb), guild_scry(bigint, jsonb, text),
  guild_decide(bigint, boolean), guild_tick(integer) to authenticated;
