-- Row-level security on every table. The page holds only the public anon key, so
-- these policies are the whole of the protection:
--   anon           reads the world the demos show; writes nothing.
--   authenticated  also writes its own rows (its JWT's `sub` is its user id, as text).
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

grant usage on schema public to anon, authenticated;

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

-- What a signed-in user may touch: their own rows.
create function auth_user_id() returns text language sql stable as $$
  select nullif(current_setting('request.jwt.claims', true)::jsonb ->> 'sub', '')
$$;

grant select, insert, update, delete on relationships, inventory, messages, memories,
  transactions to authenticated;
grant select, insert on applied_actions to authenticated;
grant insert on posts, votes, battle_participants to authenticated;
grant usage on all sequences in schema public to authenticated;

create policy own_rows on relationships for all to authenticated
  using (user_id::text = auth_user_id()) with check (user_id::text = auth_user_id());
create policy own_rows on inventory for all to authenticated
  using (user_id::text = auth_user_id()) with check (user_id::text = auth_user_id());
create policy own_rows on memories for all to authenticated
  using (user_id::text = auth_user_id()) with check (user_id::text = auth_user_id());
create policy own_rows on applied_actions for all to authenticated
  using (user_id = auth_user_id()) with check (user_id = auth_user_id());
create policy own_rows on transactions for all to authenticated
  using (user_id = auth_user_id()) with check (user_id = auth_user_id());
create policy own_messages on messages for all to authenticated
  using (auth_user_id() in (sender_id::text, receiver_id::text))
  with check (sender_id::text = auth_user_id());
create policy own_posts on posts for insert to authenticated
  with check (author_id::text = auth_user_id());
create policy own_votes on votes for insert to authenticated
  with check (user_id::text = auth_user_id());
create policy own_participation on battle_participants for insert to authenticated
  with check (user_id::text = auth_user_id());
