-- Row-level security, asserted against the real database: run with psql as the
-- superuser after the migrations (scripts/test.sh does). Each check raises on failure;
-- everything runs in one transaction that is rolled back, leaving the data as it was.

begin;

create function pg_temp.expect_denied(statement text) returns void language plpgsql as $$
begin
  execute statement;
  raise exception 'expected this to be refused: %', statement;
exception
  when insufficient_privilege then null;
end $$;

create function pg_temp.expect_count(statement text, expected bigint) returns void language plpgsql as $$
declare n bigint;
begin
  execute format('select count(*) from (%s) q', statement) into n;
  if n <> expected then
    raise exception 'expected % rows, got %: %', expected, n, statement;
  end if;
end $$;

-- anon: reads what the demos show, writes nothing, sees nothing private.
set role anon;
select pg_temp.expect_count('select * from users', 4);
select pg_temp.expect_count('select * from communities', 2);
select pg_temp.expect_count('select * from market_items', 3);  -- the unavailable map is hidden
select pg_temp.expect_count('select * from battles where status = ''active''', 1);
select pg_temp.expect_denied('select * from messages');
select pg_temp.expect_denied('select * from memories');
select pg_temp.expect_denied('select * from transactions');
select pg_temp.expect_denied('insert into users (username) values (''intruder'')');
select pg_temp.expect_denied('update users set gold = 9999');
select pg_temp.expect_denied('delete from market_items');
select pg_temp.expect_denied('insert into posts (author_id, content) values (3, ''spam'')');
reset role;

-- authenticated as user 3: their own rows only.
set role authenticated;
select set_config('request.jwt.claims', '{"sub": "3", "role": "authenticated"}', false);
select pg_temp.expect_count('select * from inventory', 1);
select pg_temp.expect_count('select * from messages', 1);
select pg_temp.expect_count('select * from memories', 0);
insert into messages (sender_id, receiver_id, content) values (3, 1, 'A round of ale, please.');
insert into posts (author_id, community_id, content) values (3, 1, 'Lanterns lit.');
select pg_temp.expect_denied('insert into messages (sender_id, receiver_id, content) values (1, 3, ''forged'')');
select pg_temp.expect_denied('insert into posts (author_id, content) values (2, ''forged'')');
select pg_temp.expect_denied('update users set gold = 9999 where id = 3');
select pg_temp.expect_count('select * from inventory where user_id = 1', 0);
insert into transactions (user_id, character, transaction_type, state)
  values ('3', 'dotty', 'drink_order', 'pending_payment');
select pg_temp.expect_denied('insert into transactions (user_id, character, transaction_type, state) values (''1'', ''dotty'', ''drink_order'', ''x'')');
reset role;

select 'row-level security: all checks passed' as result;
rollback;
