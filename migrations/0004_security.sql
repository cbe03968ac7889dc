-- Row-level security on every table. The page holds only the public anon key and, once
-- signed in, the user's own JWT, so these policies are the whole of the protection:
--   anon           reads the world the demos show; writes nothing.
--   authenticated  also reads and writes its own private rows (memories, its ledger,
--                  its character transactions); the world itself changes only through
--                  the action functions of 0006_actions.sql, which check the game's
--                  rules. No policy lets anyone write users, inventory, battles,
--                  messages and the rest directly.
-- A new Supabase project grants every table to anon and authenticated; the policies,
-- not missing grants, are what refuse (tests/sql/rls.sql runs under those grants). The
-- grants below are the least each role needs, for deployments that grant nothing.
-- The roles exist on Supabase; elsewhere the deployment creates them first.

do $$
declare t text;
begin
  foreach t in array array['users', 'communities', 'user_communities', 'relationships',
    'battles', 'battle_participants', 'market_items', 'inventory', 'messages', 'posts',
    'proposals', 'votes', 'memories', 'game_state', 'guild_proposals', 'transactions',
    'jobs', 'applied_actions']
  loop
    execute format('alter table %I enable row level security', t);
  end loop;
end $$;

revoke all on all tables in schema public from anon, authenticated;
grant usage on schema public to anon, authenticated;

-- The signed-in user: their JWT's `sub` (a Supabase Auth user id), and the world user
-- they play as (`users.auth_id`; `enter_world()` creates it).
create function auth_user_id() returns text language sql stable as $$
  select nullif(current_setting('request.jwt.claims', true)::jsonb ->> 'sub', '')
$$;

create function world_user() returns bigint
  language sql stable security definer set search_path = public, pg_temp as $$
  select id from users where auth_id = auth_user_id()
$$;

-- What anyone may read: the public face of the world.
grant select on users, communities, user_communities, battles, battle_participants,
  market_items, posts, proposals, votes, game_state, guild_proposals, jobs
  to anon, authenticated;
create policy public_read on users for select to anon, authenticated using (true);
create policy public_read on communities for select to anon, authenticated using (true);
create policy public_read on user_communities for select to anon, authenticated using (true);
create policy public_read on battles for select to anon, authenticated using (true);
create policy public_read on battle_participants for select to anon, authenticated using (true);
create policy public_read on market_items for select to anon, authenticated using (available);
create policy public_read on posts for select to anon, authenticated using (true);
create policy public_read on proposals for select to anon, authenticated using (true);
create policy public_read on votes for select to anon, authenticated using (true);
create policy public_read on game_state for select to anon, authenticated using (true);
create policy public_read on guild_proposals for select to anon, authenticated using (true);
create policy public_read on jobs for select to anon, authenticated using (true);

-- What a signed-in user may read of their own: relationships, inventory, messages sent
-- or received. Changing them is the action functions' work.
grant select on relationships, inventory, messages to authenticated;
create policy own_rows on relationships for select to authenticated
  using (world_user() in (user_id, target_id));
create policy own_rows on inventory for select to authenticated
  using (user_id = world_user());
create policy own_messages on messages for select to authenticated
  using (world_user() in (sender_id, receiver_id));

-- What a signed-in user may write directly: their memories, their ledger (recorded
-- once, never rewritten), their character transactions (begun pending; changed only
-- while pending; never deleted).
grant select, insert, update, delete on memories to authenticated;
grant select, insert on applied_actions to authenticated;
grant select, insert, update on transactions to authenticated;
create policy own_rows on memories for all to authenticated
  using (user_id = world_user()) with check (user_id = world_user());
create policy own_rows on applied_actions for select to authenticated
  using (user_id = auth_user_id());
create policy own_rows_insert on applied_actions for insert to authenticated
  with check (user_id = auth_user_id());
create policy own_rows on transactions for select to authenticated
  using (user_id = auth_user_id());
create policy begin_pending on transactions for insert to authenticated
  with check (user_id = auth_user_id() and status = 'pending');
create policy change_pending on transactions for update to authenticated
  using (user_id = auth_user_id() and status = 'pending')
  with check (user_id = auth_user_id());
grant usage on all sequences in schema public to authenticated;
