-- The review's low items on the database (issue 56).
--
-- Helpers are not API. A new Supabase project grants every function to anon and
-- authenticated directly, so a `revoke … from public` (0006, 0008, 0009, 0010, 0012)
-- left them callable as `rpc/<helper>`: `acting_user()` locked and answered the
-- caller's row, `ledger_owner()` and `acting_guild()` ran outside any action. Every
-- helper is now revoked from anon and authenticated by name, and the API from anon
-- (it acts only for a signed-in player). What authenticated may call is the API (the
-- actions, `act_as`, `enter_world`, `claim_agents`, the guild's functions,
-- `set_standing_orders`) and what row-level policies call as the querying role:
-- `world_user()` (anon too), `owns_agent`, `owns_ledger`, `agent_actions` and
-- `unknown_outcome`. tests/sql/grants.sh applies the migrations under Supabase's
-- default grants and checks every function anon or authenticated may run against
-- that list.
--
-- A player writes no database action into their ledger. The page's own ledger
-- (src/tool/ledger.rs) keeps writing what the database cannot: the results of its own
-- actions (`remember`, `forget`: rows the page writes itself), and, for a database
-- action that timed out, the marker `{"outcome": "unknown", "note": …}` that makes a
-- resumed run ask rather than apply twice (`record_unknown`). Anything else under a
-- database action's name — a result forged ahead of the action, so that the action
-- answers it and never applies — is refused by the policy, and a record of another
-- tool under the key an action is called with no longer answers for the action: the
-- action refuses the key as taken.

-- Whether `result` is the page's marker for an action whose outcome it does not know.
create function unknown_outcome(result jsonb) returns boolean
  language sql immutable set search_path = public, pg_temp as $$
  select coalesce(jsonb_typeof(result) = 'object' and result ->> 'outcome' = 'unknown'
                  and result - 'outcome' - 'note' = '{}'::jsonb, false)
$$;

drop policy own_rows_insert on applied_actions;
drop policy owned_agents_insert on applied_actions;
create policy own_rows_insert on applied_actions for insert to authenticated
  with check ((user_id = auth_user_id() or owns_ledger(user_id))
              and (not tool = any (agent_actions()) or unknown_outcome(result)));

-- 0016's `ledger_result`, answering only a database action's record (or the page's
-- marker), and refusing a key another tool's record holds.
create or replace function ledger_result(key text) returns jsonb
  language plpgsql volatile security definer set search_path = public, pg_temp as $$
declare owner text; given text := case when btrim(key) = '' then null else key end; found applied_actions;
begin
  if given is null then
    return null;
  end if;
  owner := ledger_owner();
  perform limit_lock('ledger key', owner || chr(31) || given);
  select * into found from applied_actions a where a.user_id = owner and a.key = given;
  if found.key is not null and not found.tool = any (agent_actions()) then
    raise exception 'the key % is taken by a record of %; call the action with a key of its own', given, found.tool
      using errcode = 'P0001';
  end if;
  return found.result;
end $$;

-- Helpers, by name, from everyone but the owner.
revoke all on function acting_user(), ledger_owner(), ledger_result(text),
  ledger_record(text, text, jsonb), acting_guild(), pending_proposal(bigint),
  checked_text(text, text, integer), checked_amount(integer, text, integer),
  clamped_stat(bigint), checked_delta(jsonb), guild_clamp(text, bigint),
  history_answer(guild_history, boolean), refuse_oversized(), said_time(timestamptz),
  limit_lock(text, text), rosier_forecast(jsonb, jsonb), account_of(bigint),
  account_users(bigint), member_since(bigint, bigint), established(bigint, bigint),
  limit_writes(), limit_rows(), limit_joins(), limit_votes(), limit_blows(),
  limit_account(bigint, text, integer), limit_account_row(), agent_actions(),
  checked_orders(jsonb), listed(jsonb, bigint, text), obey_orders(bigint, text, jsonb),
  spend_within_orders(bigint, users), unknown_outcome(jsonb), gold_loop()
  from public, anon, authenticated;
-- The API is for signed-in players: 0006, 0009 and 0012 granted it to authenticated
-- and revoked it from public only, which left anon its Supabase default.
revoke all on function enter_world(text), claim_agents(), act_as(bigint, text, jsonb, text),
  send_message(bigint, text, text), reply_to_message(bigint, text, text),
  create_post(text, bigint, text), join_battle(bigint, integer, text),
  ignore_battle(bigint, text), buy_item(text, integer, text),
  consume_item(text, integer, text), do_work(text, text), join_community(bigint, text),
  leave_community(bigint, text), vote_on_proposal(bigint, boolean, text),
  abstain_from_vote(bigint, text), create_proposal(bigint, text, text),
  create_proposal(bigint, text, text, text)
  from anon;
-- What policies call, for the roles whose policies call it (the ledger's insert policy
-- above calls `agent_actions` and `unknown_outcome`, pure functions).
revoke all on function owns_agent(bigint), owns_ledger(text) from public, anon;
grant execute on function owns_agent(bigint), owns_ledger(text), agent_actions(),
  unknown_outcome(jsonb) to authenticated;
