-- An owner's approval reaches past their agent's standing orders (issue 56).
--
-- 0018 held every call of `act_as` to the agent's standing orders, so a call outside
-- them that the engine asked the owner about, and the owner approved, was refused all
-- the same: the orders meant "never", where they mean "not unasked". `approved =>
-- true` says the owner approved this very call: it then runs outside the orders and
-- is counted against none of their daily bounds. The flag is the owner's word, and
-- the owner's word is all it takes: with the same sign-in they may lift the orders
-- (`set_standing_orders(agent, null)`). What the orders hold back is the agent: the
-- engine sets the flag only on a call a person approved, and the model, which names
-- only an action's own arguments, cannot set it.

drop function act_as(bigint, text, jsonb, text);

create function act_as(agent bigint, action text, args jsonb default '{}', key text default null,
                       approved boolean default false)
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
  if not coalesce(approved, false) then
    perform obey_orders(agent, action, coalesce(args, '{}'));
  end if;
  select string_agg(format('%I => %L', a.name, a.value), ', ' order by a.name)
    into call
    from jsonb_each_text(coalesce(args, '{}') - 'key') a(name, value);
  call := concat_ws(', ', call, format('key => %L', key));
  perform set_config('familiar.acting_agent', agent::text, true);
  execute format('select %I(%s)', action, call) into result;
  perform set_config('familiar.acting_agent', '', true);
  if not coalesce(approved, false) then
    perform spend_within_orders(agent, before);
  end if;
  return result;
end $$;

revoke all on function act_as(bigint, text, jsonb, text, boolean) from public, anon;
grant execute on function act_as(bigint, text, jsonb, text, boolean) to authenticated;
