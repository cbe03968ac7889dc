-- Limits that hold in a shared world (issue 39): one person with many one-click
-- anonymous accounts, each with the agents it claims, no longer multiplies votes,
-- battle damage or writes. What holds, for every writer (a trigger on the table, so
-- every function, this one's callers and any written later):
--   * an account is a player and the agents they own (`account_of`): they share one
--     vote per proposal, and one budget of writes;
--   * writes per account (or per sign-in, for its own rows) in the last hour are
--     capped: 30 posts, 60 messages, 10 proposals, 60 battle actions, 120 memories,
--     60 character transactions, 600 ledger records;
--   * a user joins at most 3 communities a day (a claimed agent's copied memberships
--     count as joins);
--   * standing: a member of a community for less than a day is its newcomer. Its
--     newcomers, however many accounts they come from, together add at most 3 votes
--     to a proposal and 500 damage a day to its side of a battle; members of a day or
--     more vote and fight without that limit. Leaving and joining again starts anew.
-- Memberships older than this migration count as a day old.
--
-- Requests race: under READ COMMITTED no request sees another's rows before they
-- commit, so a limit that inserts and then counts would let parallel requests through
-- together (two agents of one account voting at once, both counted). Each limit
-- therefore first takes a transaction-scoped lock on what it counts (`limit_lock`),
-- in one order everywhere: the account, then the shared thing (a proposal, a battle's
-- side), then the sign-in (its ledger records and character transactions, written
-- last: `ledger_record` ends every action). A racing request waits there until the
-- first commits or rolls back, then counts with a fresh snapshot (each statement of
-- a trigger takes one under READ COMMITTED, PostgREST's and Supabase's level). These
-- locks come after the rows the action functions lock themselves (the acting user's
-- in `acting_user`, a battle's in `join_battle`), and no one takes such a row while
-- holding them, so no two requests wait on each other.
--
-- Every refusal is `raise exception` (P0001, which the store reads as a rule) with a
-- plain sentence saying what the limit is and when it lifts, for the model to plan
-- around. The local store does not mirror these: offline, the world has one player.
--
-- The guild council: a forecast (`guild_scry`) is never rosier than what the council
-- drafted: no gain above the draft's, no cost below it, no gain the draft did not hope
-- for (so the oracle cannot be made to promise what the council never proposed). The
-- local store's twin is src/guild/rules.rs.

-- The account world user `who` belongs to: their owner if they are an agent, else them.
create function account_of(who bigint) returns bigint
  language sql stable security definer set search_path = public, pg_temp as $$
  select coalesce((select o.owner_id from agent_owners o where o.agent_id = who), who)
$$;

-- The world users of `account`: the player and the agents they own.
create function account_users(account bigint) returns setof bigint
  language sql stable security definer set search_path = public, pg_temp as $$
  select account union select o.agent_id from agent_owners o where o.owner_id = account
$$;

-- A time as the refusals say it.
create function said_time(at timestamptz) returns text
  language sql stable set search_path = public, pg_temp as $$
  select to_char(at at time zone 'UTC', 'YYYY-MM-DD HH24:MI') || ' UTC'
$$;

-- Waits for, then holds to the end of the transaction, the limits' lock on `subject`
-- (a world user's account, a sign-in, a proposal, a battle's side) named by `key`.
-- Advisory, in two-int form: a namespace per kind of subject, and the key's hash (a
-- collision only makes two subjects wait on each other, never lets a race through).
create function limit_lock(subject text, key text) returns void
  language plpgsql volatile set search_path = public, pg_temp as $$
declare namespace integer := case subject
  when 'account' then 1301 when 'sign-in' then 1302
  when 'proposal' then 1303 when 'battle side' then 1304 end;
begin
  if namespace is null then
    raise exception 'no limit locks a %', subject;
  end if;
  perform pg_advisory_xact_lock(namespace, hashtext(key));
end $$;

-- Writes in the last hour, capped. A row trigger with the arguments: the column naming
-- the writer, the column of the row's time, the most rows an hour, what the rows are
-- called, and `account` (the writer is a world user; their account's users count
-- together) or `writer` (the column's value alone counts: a sign-in or a ledger).
create function limit_writes() returns trigger
  language plpgsql security definer set search_path = public, pg_temp as $$
declare
  who_column text := tg_argv[0];
  time_column text := tg_argv[1];
  most integer := tg_argv[2]::integer;
  noun text := tg_argv[3];
  by_account boolean := tg_argv[4] = 'account';
  writer text := to_jsonb(new) ->> who_column;
  made bigint;
  oldest timestamptz;
begin
  if by_account then
    perform limit_lock('account', account_of(writer::bigint)::text);
    execute format('select count(*), min(t.%2$I) from %3$I t where t.%2$I > now() - interval ''1 hour''
                    and t.%1$I in (select account_users(account_of($1::bigint)))',
                   who_column, time_column, tg_table_name)
      into made, oldest using writer;
  else
    perform limit_lock('sign-in', writer);
    execute format('select count(*), min(t.%2$I) from %3$I t where t.%2$I > now() - interval ''1 hour''
                    and t.%1$I = $1', who_column, time_column, tg_table_name)
      into made, oldest using writer;
  end if;
  if made > most then
    raise exception '% may make at most % % an hour; try again after %',
      case when by_account then 'you and your agents' else 'you' end, most, noun,
      said_time(oldest + interval '1 hour') using errcode = 'P0001';
  end if;
  return null;
end $$;

create index posts_by_author on posts (author_id, created_at);
create index messages_by_sender on messages (sender_id, created_at);
create index proposals_by_author on proposals (author_id, created_at);
create index memories_by_user on memories (user_id, created_at);
create index transactions_by_user on transactions (user_id, created_at);
create index applied_actions_by_time on applied_actions (user_id, applied_at);

create trigger write_limits after insert on posts for each row
  execute function limit_writes('author_id', 'created_at', '30', 'posts', 'account');
create trigger write_limits after insert on messages for each row
  execute function limit_writes('sender_id', 'created_at', '60', 'messages', 'account');
create trigger write_limits after insert on proposals for each row
  execute function limit_writes('author_id', 'created_at', '10', 'proposals', 'account');
create trigger write_limits after insert on memories for each row
  execute function limit_writes('user_id', 'created_at', '120', 'memories', 'account');
create trigger write_limits after insert on transactions for each row
  execute function limit_writes('user_id', 'created_at', '60', 'character transactions', 'writer');
create trigger write_limits after insert on applied_actions for each row
  execute function limit_writes('user_id', 'applied_at', '600', 'ledger records', 'writer');

-- Every join of a community, the ones before this migration dated at the epoch: how
-- often a user joins, and since when they are a member.
create table community_joins (
  user_id bigint not null references users (id) on delete cascade,
  community_id bigint not null references communities (id) on delete cascade,
  joined_at timestamptz not null default now()
);
create index community_joins_by_user on community_joins (user_id, community_id, joined_at);
insert into community_joins (user_id, community_id, joined_at)
  select m.user_id, m.community_id, 'epoch' from user_communities m;

-- When `who` joined `community` for the membership they hold now (null if none).
create function member_since(who bigint, community bigint) returns timestamptz
  language sql stable security definer set search_path = public, pg_temp as $$
  select max(j.joined_at) from community_joins j
  where j.user_id = who and j.community_id = community
    and exists (select 1 from user_communities m where m.user_id = who and m.community_id = community)
$$;

-- Whether `who` has been a member of `community` for a day or more.
create function established(who bigint, community bigint) returns boolean
  language sql stable security definer set search_path = public, pg_temp as $$
  select coalesce(member_since(who, community) <= now() - interval '1 day', false)
$$;

-- At most 3 joins a day per user; each join recorded.
create function limit_joins() returns trigger
  language plpgsql security definer set search_path = public, pg_temp as $$
declare joined bigint; oldest timestamptz;
begin
  perform limit_lock('account', account_of(new.user_id)::text);
  insert into community_joins (user_id, community_id) values (new.user_id, new.community_id);
  select count(*), min(j.joined_at) into joined, oldest from community_joins j
    where j.user_id = new.user_id and j.joined_at > now() - interval '1 day';
  if joined > 3 then
    raise exception 'you may join at most 3 communities a day; try again after %',
      said_time(oldest + interval '1 day') using errcode = 'P0001';
  end if;
  return null;
end $$;

create trigger join_limits after insert on user_communities for each row
  execute function limit_joins();

-- The votes of newcomers (members of the proposal's community for less than a day).
create table newcomer_votes (
  proposal_id bigint not null,
  user_id bigint not null,
  primary key (proposal_id, user_id),
  foreign key (proposal_id, user_id) references votes (proposal_id, user_id) on delete cascade
);

-- One vote per account per proposal, and at most 3 newcomers' votes per proposal.
create function limit_votes() returns trigger
  language plpgsql security definer set search_path = public, pg_temp as $$
declare community bigint; counted bigint;
begin
  perform limit_lock('account', account_of(new.user_id)::text);
  perform limit_lock('proposal', new.proposal_id::text);
  if exists (select 1 from votes v
             where v.proposal_id = new.proposal_id and v.user_id <> new.user_id
               and v.user_id in (select account_users(account_of(new.user_id)))) then
    raise exception 'you and your agents share one vote, and your account has voted on proposal % already',
      new.proposal_id using errcode = 'P0001';
  end if;
  select p.community_id into community from proposals p where p.id = new.proposal_id;
  if not established(new.user_id, community) then
    select count(*) into counted from newcomer_votes n where n.proposal_id = new.proposal_id;
    if counted >= 3 then
      raise exception 'proposal % already counts the votes of 3 members of less than a day, the most it takes; you may vote on it once you have been a member for a day, after %',
        new.proposal_id, said_time(member_since(new.user_id, community) + interval '1 day')
        using errcode = 'P0001';
    end if;
    insert into newcomer_votes (proposal_id, user_id) values (new.proposal_id, new.user_id);
  end if;
  return null;
end $$;

create trigger vote_limits after insert on votes for each row
  execute function limit_votes();

-- Every blow struck in a battle: how often an account fights, and how much damage the
-- newcomers of each side dealt.
create table battle_blows (
  battle_id bigint not null references battles (id) on delete cascade,
  side integer not null,
  user_id bigint not null references users (id) on delete cascade,
  account_id bigint not null,
  damage integer not null,
  newcomer boolean not null,
  struck_at timestamptz not null default now()
);
create index battle_blows_by_account on battle_blows (account_id, struck_at);
create index battle_blows_by_side on battle_blows (battle_id, side, struck_at) where newcomer;

-- At most 60 battle actions an hour per account; newcomers to a side's community
-- together deal at most 500 damage a day to that side of the battle.
create function limit_blows() returns trigger
  language plpgsql security definer set search_path = public, pg_temp as $$
declare
  added integer := new.damage_dealt;
  account bigint := account_of(new.user_id);
  community bigint;
  fresh boolean;
  dealt bigint;
  struck bigint;
  oldest timestamptz;
begin
  if tg_op = 'UPDATE' then
    added := new.damage_dealt - old.damage_dealt;
  end if;
  if added <= 0 then
    return null;
  end if;
  perform limit_lock('account', account::text);
  select case new.side when 1 then b.community1_id else b.community2_id end into community
    from battles b where b.id = new.battle_id;
  fresh := not established(new.user_id, community);
  if fresh then
    perform limit_lock('battle side', new.battle_id || ':' || new.side);
  end if;
  insert into battle_blows (battle_id, side, user_id, account_id, damage, newcomer)
    values (new.battle_id, new.side, new.user_id, account, added, fresh);
  select count(*), min(b.struck_at) into struck, oldest from battle_blows b
    where b.account_id = account and b.struck_at > now() - interval '1 hour';
  if struck > 60 then
    raise exception 'you and your agents may fight at most 60 times an hour; try again after %',
      said_time(oldest + interval '1 hour') using errcode = 'P0001';
  end if;
  if fresh then
    select coalesce(sum(b.damage), 0) into dealt from battle_blows b
      where b.battle_id = new.battle_id and b.side = new.side and b.newcomer
        and b.struck_at > now() - interval '1 day';
    if dealt > 500 then
      raise exception 'members of % for less than a day may deal at most 500 damage a day together in battle %, and % of it is left; you fight without this limit once you have been a member for a day, after %',
        (select c.name from communities c where c.id = community), new.battle_id,
        greatest(0, 500 - (dealt - added)),
        said_time(member_since(new.user_id, community) + interval '1 day')
        using errcode = 'P0001';
    end if;
  end if;
  return null;
end $$;

create trigger blow_limits after insert or update of damage_dealt on battle_participants
  for each row execute function limit_blows();

-- The logs are the game's own: no one reads or writes them but the triggers.
alter table community_joins enable row level security;
alter table newcomer_votes enable row level security;
alter table battle_blows enable row level security;
revoke all on community_joins, newcomer_votes, battle_blows from anon, authenticated;

-- The first way `forecast` is rosier than `draft` (both checked deltas), or null: a
-- gain above the draft's, a cost below it, or a gain the draft did not hope for.
create function rosier_forecast(draft jsonb, forecast jsonb) returns text
  language plpgsql immutable set search_path = public, pg_temp as $$
declare resource text; hoped integer; said integer;
begin
  foreach resource in array array['food', 'gold', 'influence', 'morale'] loop
    hoped := coalesce((draft ->> resource)::integer, 0);
    said := coalesce((forecast ->> resource)::integer, 0);
    if said > hoped then
      return case
        when hoped > 0 then format('the forecast gains %s %s, more than the %s the council hoped for', said, resource, hoped)
        when hoped < 0 then format('the forecast costs %s %s, less than the %s the council counted', -said, resource, -hoped)
        else format('the forecast gains %s %s, which the council never proposed', said, resource)
      end;
    end if;
  end loop;
  return null;
end $$;

-- The oracle's forecast for a pending proposal, never rosier than the proposal as it
-- stands (the draft, or an earlier forecast).
create or replace function guild_scry(proposal_id bigint, predicted_delta jsonb, risk_note text)
  returns jsonb language plpgsql security definer set search_path = public, pg_temp as $$
declare g guilds; p guild_proposals; forecast jsonb; note text; rosier text;
begin
  g := acting_guild();
  p := pending_proposal(proposal_id);
  forecast := checked_delta(guild_scry.predicted_delta);
  note := checked_text(guild_scry.risk_note, 'risk note', 300);
  rosier := rosier_forecast(p.predicted_delta, forecast);
  if rosier is not null then
    raise exception '%; a forecast is never rosier than the proposal', rosier using errcode = 'P0001';
  end if;
  update guild_proposals gp set predicted_delta = forecast, risk_note = note
    where gp.id = p.id returning * into p;
  return to_jsonb(p) - 'created_at';
end $$;

revoke all on function account_of(bigint), account_users(bigint), said_time(timestamptz),
  limit_lock(text, text), limit_writes(), member_since(bigint, bigint),
  established(bigint, bigint), limit_joins(), limit_votes(), limit_blows(),
  rosier_forecast(jsonb, jsonb)
  from public, anon, authenticated;
