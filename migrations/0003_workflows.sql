-- Declarative character workflows (seed 002): one transaction per user and character
-- at a time, moving through the workflow's states.

create table transactions (
  id uuid primary key default gen_random_uuid(),
  user_id text not null,
  character text not null,
  transaction_type text not null,
  state text not null,
  status text not null default 'pending'
    check (status in ('pending', 'completed', 'cancelled', 'expired')),
  context jsonb not null default '{}',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create unique index transactions_one_pending
  on transactions (user_id, character) where status = 'pending';

-- Actions a run applied, by idempotency key: a resumed or retried run reads the
-- recorded result instead of applying the action again. Keys are per user: another
-- user's key never hides yours.
create table applied_actions (
  user_id text not null,
  key text not null,
  tool text not null,
  result jsonb not null,
  applied_at timestamptz not null default now(),
  primary key (user_id, key)
);
