-- The shared world under load (issue 47): many players' requests at once, nothing
-- applied twice, no two requests waiting on each other, no one writing without end.
--
-- Locks, in the one order every world function takes them:
--   1. the ledger key (`ledger_result`, first thing an action does when given a key);
--   2. the acting user's row (`acting_user`), then the shared row the action changes
--      (a battle's in `join_battle`, an inventory row);
--   3. the limits' advisory locks (0013): the account, then the shared thing (a
--      proposal, a battle's side), then the sign-in (its ledger records, written last).
-- Two changes make that order hold:
--   * `acting_user` locks its row FOR NO KEY UPDATE, not FOR UPDATE. A row a request
--     inserts that points at another user (a message to them, a reply) makes
--     PostgreSQL take FOR KEY SHARE on that user's row, which FOR UPDATE blocks: two
--     players messaging each other at once each held their own row and waited for
--     the other's, a deadlock PostgreSQL broke by failing one of them (40P01).
--     FOR NO KEY UPDATE still serializes a user's own actions (gold, energy) but lets
--     a key-share through, as the updates of gold and energy themselves do.
--   * A retried request (the same key) that arrives while the first is still running
--     used to find no result, wait for the user's row, then apply the action a second
--     time and fail on the ledger's primary key. `ledger_result` now waits on the key
--     first: the retry finds the first request's result once it commits (or applies
--     the action itself if the first rolled back), and returns it unchanged.
--
-- Limits that extend 0013's hourly ones (same trigger style, same account lock, same
-- kind of sentence): a day's writes per account — 150 posts, 300 messages, 30
-- proposals — and a standing quota of 1000 memories per world user (memories are
-- kept until their owner forgets them, so the quota counts every row, not a window).

-- A lock for the ledger key, the first of the order above.
create or replace function limit_lock(subject text, key text) returns void
  language plpgsql volatile set search_path = public, pg_temp as $$
declare namespace integer := case subject
  when 'account' then 1301 when 'sign-in' then 1302
  when 'proposal' then 1303 when 'battle side' then 1304 when 'ledger key' then 1305 end;
begin
  if namespace is null then
    raise exception 'no limit locks a %', subject;
  end if;
  perform pg_advisory_xact_lock(namespace, hashtext(key));
end $$;

-- The result recorded under `key` in the running action's ledger, if any, read once
-- no other transaction is applying the same key.
create or replace function ledger_result(key text) returns jsonb
  language plpgsql volatile security definer set search_path = public, pg_temp as $$
declare owner text;
begin
  if key is null then
    return null;
  end if;
  owner := ledger_owner();
  perform limit_lock('ledger key', owner || chr(31) || key);
  return (select a.result from applied_actions a
          where a.user_id = owner and a.key = ledger_result.key);
end $$;

create or replace function acting_user() returns users
  language plpgsql security definer set search_path = public, pg_temp as $$
declare me users; agent bigint := nullif(current_setting('familiar.acting_agent', true), '')::bigint;
begin
  if agent is null then
    select * into me from users where auth_id = auth_user_id() for no key update;
    if not found then
      raise exception 'sign in and enter the world first' using errcode = '42501';
    end if;
    return me;
  end if;
  if not owns_agent(agent) then
    raise exception 'you do not own agent %', agent using errcode = '42501';
  end if;
  select * into me from users where id = agent for no key update;
  if not found then
    raise exception 'there is no user %', agent;
  end if;
  return me;
end $$;

-- Rows per writer, capped: within a window (`1 day`), or in all (`ever`). A row trigger
-- with the arguments: the column naming the writer (a world user), the column of the
-- row's time, the most rows, what the rows are called, the window, and `account` (the
-- writer's account counts together, under 0013's account lock) or `user` (the writer
-- alone, under the same lock: a user belongs to one account).
create function limit_rows() returns trigger
  language plpgsql security definer set search_path = public, pg_temp as $$
declare
  who_column text := tg_argv[0];
  time_column text := tg_argv[1];
  most integer := tg_argv[2]::integer;
  noun text := tg_argv[3];
  span text := tg_argv[4];
  by_account boolean := tg_argv[5] = 'account';
  writer bigint := (to_jsonb(new) ->> who_column)::bigint;
  writers text := case when by_account then 'in (select account_users(account_of($1)))'
                       else '= $1' end;
  made bigint;
  oldest timestamptz;
begin
  perform limit_lock('account', account_of(writer)::text);
  if span = 'ever' then
    execute format('select count(*) from %2$I t where t.%1$I %3$s', who_column, tg_table_name, writers)
      into made using writer;
    if made > most then
      raise exception '% may keep at most % %; delete some before adding more',
        case when by_account then 'you and your agents' else 'each of you' end, most, noun
        using errcode = 'P0001';
    end if;
  else
    execute format('select count(*), min(t.%2$I) from %3$I t where t.%2$I > now() - $2::interval
                    and t.%1$I %4$s', who_column, time_column, tg_table_name, writers)
      into made, oldest using writer, span;
    if made > most then
      raise exception '% may make at most % % a day; try again after %',
        case when by_account then 'you and your agents' else 'you' end, most, noun,
        said_time(oldest + span::interval) using errcode = 'P0001';
    end if;
  end if;
  return null;
end $$;

create trigger daily_limits after insert on posts for each row
  execute function limit_rows('author_id', 'created_at', '150', 'posts', '1 day', 'account');
create trigger daily_limits after insert on messages for each row
  execute function limit_rows('sender_id', 'created_at', '300', 'messages', '1 day', 'account');
create trigger daily_limits after insert on proposals for each row
  execute function limit_rows('author_id', 'created_at', '30', 'proposals', '1 day', 'account');
create trigger row_quota after insert on memories for each row
  execute function limit_rows('user_id', 'created_at', '1000', 'memories', 'ever', 'user');

revoke all on function limit_rows() from public, anon, authenticated;
revoke all on function ledger_result(text) from public;

-- Indexes for the data tools' look-ups (src/world/data.rs), each named for its query:
-- a community's members, the battles a community is in, the latest posts (of a
-- community, of an author), a conversation between two users, an agent's memories
-- by importance.
create index user_communities_by_community on user_communities (community_id, user_id);
create index battles_by_community1 on battles (community1_id, id) where status = 'active';
create index battles_by_community2 on battles (community2_id, id) where status = 'active';
create index posts_by_community on posts (community_id, id);
create index posts_by_author_latest on posts (author_id, id);
create index messages_between on messages (sender_id, receiver_id, id);
create index memories_by_importance on memories (user_id, importance desc, id desc);
