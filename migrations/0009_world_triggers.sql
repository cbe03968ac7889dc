-- The world's triggers (seed 000): the one action a trigger may end with when the agent
-- chooses not to act. `ignore_battle` records the choice in the caller's ledger, so a
-- disloyal agent's "no" is a step of the run like any other, changes no row, and is
-- applied once per key. Its Rust twin is in src/world/functions/mod.rs.

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

revoke all on function ignore_battle(bigint, text) from public;
grant execute on function ignore_battle(bigint, text) to authenticated;
