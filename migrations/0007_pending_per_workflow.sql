-- One pending transaction per user, character and workflow type (issue 17): a pending
-- drink order no longer blocks a food order with the same character.

drop index if exists transactions_one_pending;

create unique index transactions_one_pending_per_type
  on transactions (user_id, character, transaction_type) where status = 'pending';
