-- A blank ledger key is no key. A client that sends `"key": null` through a PostgREST
-- that passes JSON null for a text argument as '' (postrust does) had every later call
-- answered from the first call's ledger row: the ledger took '' as a real key shared by
-- all of them. No caller means one action by a blank key, so the ledger now reads and
-- records a blank (or all-space) key as none: each such call applies, and nothing is
-- kept under it. Keys that are not blank behave as before (0006, 0012, 0015).
-- Neither is callable on its own: a new Supabase project grants every function to
-- anon and authenticated by default, which 0006's and 0015's revokes from public left
-- in place, so a player could write a result under a key of their own ledger ahead of
-- the action (which then would not apply, in their ledger only). The actions, security
-- definer, still call both. (tests/sql/preamble.sql grants everything again on purpose,
-- so the rules are tested without the grants' help; this revoke is not tested there.)

create or replace function ledger_result(key text) returns jsonb
  language plpgsql volatile security definer set search_path = public, pg_temp as $$
declare owner text; given text := case when btrim(key) = '' then null else key end;
begin
  if given is null then
    return null;
  end if;
  owner := ledger_owner();
  perform limit_lock('ledger key', owner || chr(31) || given);
  return (select a.result from applied_actions a
          where a.user_id = owner and a.key = given);
end $$;

create or replace function ledger_record(key text, tool text, result jsonb) returns jsonb
  language plpgsql security definer set search_path = public, pg_temp as $$
declare given text := case when btrim(key) = '' then null else key end;
begin
  if given is not null then
    insert into applied_actions (user_id, key, tool, result)
      values (ledger_owner(), given, ledger_record.tool, ledger_record.result);
  end if;
  return result;
end $$;

revoke all on function ledger_result(text) from public, anon, authenticated;
revoke all on function ledger_record(text, text, jsonb) from public, anon, authenticated;
