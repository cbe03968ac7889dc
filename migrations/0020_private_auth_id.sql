-- A player's Supabase Auth id is theirs (the review's item on `users`, issue 56).
--
-- 0004 granted `select on users` to anon and authenticated with a policy that reads
-- every row, so `GET /users?select=auth_id` listed the sign-in id of every player:
-- the key to their ledger (`applied_actions.user_id`), their transactions and their
-- world user. Row-level security chooses rows, not columns, so the column is closed
-- by privileges: anon and authenticated may read every column of `users` but
-- `auth_id`. The world's public face — names, stats, who is an agent, leaderboards,
-- embeds such as `users(id,username,morale)` — reads as before; a request that names
-- `auth_id` (to read it, filter or order by it) or asks for `*` is refused with
-- 42501, so the page names the columns it reads. A player still learns their own
-- row and id: `enter_world()` answers their row (auth id included), `world_user()`
-- their world user's id; the functions act as their owner and read `auth_id` there.
--
-- A column added to `users` later is nobody's until granted here by name (Supabase's
-- default privileges grant tables, not columns); tests/sql/grants.sh holds the list
-- of readable columns and fails on any other.

revoke all on users from anon, authenticated;
grant select (id, username, is_agent, health, energy, morale, gold, created_at) on users
  to anon, authenticated;
