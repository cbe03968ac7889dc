-- Caps per account whatever its age (issue 56). 0013 capped newcomers: an account's
-- members of less than a day add at most 3 votes to a proposal and 500 damage a day to
-- a side. A day later nothing held but 60 blows an hour: with seed 000's food on the
-- market (0014), keyless work, buy and eat calls turned 25 gold into 12,025 in 900
-- calls, and the energy it bought dealt 6,000 damage in seconds.
--
-- Now every account (a player and the agents they own, `account_of`) is held, together,
-- to the caps in `account_caps`, an hour and a day (the last 60 minutes, the last 24
-- hours), counted in calls and, for fighting, in damage too:
--
--   action  calls an hour  calls a day  damage an hour  damage a day
--   work         20            100
--   buy          20            100
--   eat          20            100        (consume_item, any item)
--   fight        60            300            500           2,000
--   vote         20            100
--
-- Why these. An account is at most four actors (the player and the three starters it
-- claims). Energy is 0-100 an actor, spent by work (10-20 a job) and fighting (the
-- damage), and comes back only from items (seed 000's meal: 50 energy for 10 gold).
-- One mining (50 gold) buys five meals, so an honest actor needs a few jobs a day to
-- stay fed: 100 jobs a day is each of the four working once an hour around the clock.
-- A buy takes up to 100 items, so 100 buys a day never binds an honest buyer. 100
-- meals a day is 5,000 energy, more than the day's fighting may spend. 500 damage an
-- hour is all four actors emptying a full bar, and more; 2,000 a day is four full
-- bars each, refilled four times. An account casts one vote per proposal (0013), and
-- proposals come at most 10 an hour and 30 a day per account (0013, 0015), so 20 and
-- 100 votes let an honest voter vote on everything proposed around them.
-- Farming is pointless past them: gold never passes between users and buys only items
-- that restore the buyer's own stats, so the day's 100 meals (1,000 gold) are all a
-- purse can turn into play; work makes at most 5,000 gold a day (was 12,000 in
-- minutes), and the damage it could feed is 500 an hour, 2,000 a day (was 6,000 in
-- seconds).
--
-- 0013's hourly 60 blows now live here (the same sentence); its newcomer caps stay.
-- Voting across many accounts is 0013's newcomer cap; these caps do not count accounts.
--
-- Races: each capped call logs itself in `account_actions` and counts under 0013's
-- account lock (`limit_lock('account', …)`), taken after the rows the action locks,
-- as every limit does (0013, 0015), so two of an account's calls at once count one
-- after the other. Refusals are P0001 with a sentence saying the cap and when it lifts
-- (PostgREST answers 400 with it as the body's `message`); the refused call changes
-- nothing. The local store does not mirror these caps: offline, the world has one
-- player (as 0013).

create table account_caps (
  action text primary key,
  -- The action as the refusal says it: "you and your agents may <doing> at most …".
  doing text not null,
  per_hour integer not null check (per_hour > 0),
  per_day integer not null check (per_day >= per_hour),
  -- What the calls' amounts are (null: the calls alone are capped).
  amount text,
  amount_per_hour integer check (amount_per_hour > 0),
  amount_per_day integer check (amount_per_day >= amount_per_hour),
  check ((amount is null) = (amount_per_hour is null) and (amount is null) = (amount_per_day is null))
);

insert into account_caps (action, doing, per_hour, per_day, amount, amount_per_hour, amount_per_day) values
  ('work', 'work', 20, 100, null, null, null),
  ('buy', 'buy from the market', 20, 100, null, null, null),
  ('eat', 'eat or drink', 20, 100, null, null, null),
  ('fight', 'fight', 60, 300, 'damage', 500, 2000),
  ('vote', 'vote', 20, 100, null, null, null);

-- Anyone reads the caps (the page may say them); only the game changes them.
alter table account_caps enable row level security;
revoke all on account_caps from anon, authenticated;
grant select on account_caps to anon, authenticated;
create policy public_read on account_caps for select to anon, authenticated using (true);

-- Every capped call that went through: by whom, for which account, how much.
create table account_actions (
  account_id bigint not null,
  user_id bigint not null references users (id) on delete cascade,
  action text not null references account_caps (action),
  amount integer not null default 1,
  done_at timestamptz not null default now()
);
create index account_actions_by_account on account_actions (account_id, action, done_at);

alter table account_actions enable row level security;
revoke all on account_actions from anon, authenticated;

-- Counts `who`'s call of `action` (with `amount`, for an amount-capped action) against
-- their account's caps, or refuses it: the caller's transaction then rolls back.
create function limit_account(who bigint, action text, amount integer default 1) returns void
  language plpgsql security definer set search_path = public, pg_temp as $$
declare
  account bigint := account_of(who);
  cap account_caps;
  span text;
  most integer;
  calls bigint;
  total bigint;
  oldest timestamptz;
begin
  select * into cap from account_caps c where c.action = limit_account.action;
  if not found then
    raise exception 'no cap counts %', action;
  end if;
  perform limit_lock('account', account::text);
  insert into account_actions (account_id, user_id, action, amount)
    values (account, who, cap.action, amount);
  foreach span in array array['1 hour', '1 day'] loop
    select count(*), coalesce(sum(a.amount), 0), min(a.done_at) into calls, total, oldest
      from account_actions a
      where a.account_id = account and a.action = cap.action and a.done_at > now() - span::interval;
    most := case span when '1 hour' then cap.per_hour else cap.per_day end;
    if calls > most then
      raise exception 'you and your agents may % at most % times %; try again after %',
        cap.doing, most, case span when '1 hour' then 'an hour' else 'a day' end,
        said_time(oldest + span::interval) using errcode = 'P0001';
    end if;
    most := case span when '1 hour' then cap.amount_per_hour else cap.amount_per_day end;
    if most is not null and total > most then
      raise exception 'you and your agents may deal at most % % %, and % of it is left; more comes back after %',
        most, cap.amount, case span when '1 hour' then 'an hour' else 'a day' end,
        greatest(0, most - (total - amount)), said_time(oldest + span::interval)
        using errcode = 'P0001';
    end if;
  end loop;
end $$;

-- The caps as a row trigger: `action`, the column naming the world user, and the
-- column of the amount (its rise, on an update), if the action has one.
create function limit_account_row() returns trigger
  language plpgsql security definer set search_path = public, pg_temp as $$
declare
  fields jsonb := to_jsonb(new);
  added integer := 1;
begin
  if tg_nargs > 2 then
    added := (fields ->> tg_argv[2])::integer
      - case when tg_op = 'UPDATE' then (to_jsonb(old) ->> tg_argv[2])::integer else 0 end;
    if added <= 0 then
      return null;
    end if;
  end if;
  perform limit_account((fields ->> tg_argv[1])::bigint, tg_argv[0], added);
  return null;
end $$;

create trigger account_caps after insert on votes for each row
  execute function limit_account_row('vote', 'user_id');
create trigger account_caps after insert or update of damage_dealt on battle_participants
  for each row execute function limit_account_row('fight', 'user_id', 'damage_dealt');

-- 0013's blows without their hourly count, which `account_caps` holds now.
create or replace function limit_blows() returns trigger
  language plpgsql security definer set search_path = public, pg_temp as $$
declare
  added integer := new.damage_dealt;
  account bigint := account_of(new.user_id);
  community bigint;
  fresh boolean;
  dealt bigint;
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

-- Work, buy and eat change no row a trigger could tell apart (a user's gold and
-- energy, an inventory row that also a claim copies), so the functions count
-- themselves, last, after their own checks and rows. Otherwise as 0006 wrote them.
create or replace function buy_item(item_name text, quantity integer default 1, key text default null)
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
  perform limit_account(me.id, 'buy');
  return ledger_record(key, 'buy_item', jsonb_build_object('purchased', item.name,
    'quantity', amount, 'cost', cost, 'gold_left', me.gold - cost));
end $$;

create or replace function consume_item(item_name text, quantity integer default 1, key text default null)
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
  perform limit_account(me.id, 'eat');
  return ledger_record(key, 'consume_item', jsonb_build_object('consumed', item.name,
    'quantity', amount, 'effects', item.effects, 'now', now_stats));
end $$;

create or replace function do_work(job text, key text default null)
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
  perform limit_account(me.id, 'work');
  return ledger_record(key, 'do_work', jsonb_build_object('job', work.name,
    'earned', work.pay, 'energy_spent', work.energy_cost,
    'gold', me.gold + work.pay, 'energy', me.energy - work.energy_cost));
end $$;

revoke all on function limit_account(bigint, text, integer), limit_account_row(), limit_blows()
  from public, anon, authenticated;
