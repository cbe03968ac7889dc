-- What must hold after bench/world_load's players have played (run by run.sh as the
-- superuser, after `bench_applied` is loaded from the players' applied.csv; each check
-- raises on failure). `bench_start` and the `bench_*` snapshots were taken before the
-- run.
--   * every action a player saw applied is in the ledger exactly once, and the ledger
--     holds no keyed action of theirs that they did not see applied;
--   * gold moved only through work (the ledger's `earned`) and the market (`cost`),
--     per world user; bread only through buying and eating;
--   * every blow counted once: each battle side's damage rose by what the blows' log
--     says and by what the ledger's join_battle results say;
--   * votes: one per account per proposal, and as many as the ledger applied;
--   * posts and messages: one row per applied key.

create temp table ledger as
  select coalesce(u.id, substr(a.user_id, 7)::bigint) as who, a.user_id as owner, a.key, a.tool, a.result
  from applied_actions a left join users u on u.auth_id = a.user_id
  where a.applied_at >= (select at from bench_start) and a.key like 'load-%';

create function pg_temp.check(what text, failures bigint) returns void language plpgsql as $$
begin
  if failures <> 0 then
    raise exception 'invariant broken: % (% cases)', what, failures;
  end if;
  raise notice 'ok: %', what;
end $$;
set client_min_messages = notice;

select pg_temp.check('every applied action in the ledger, once, under its tool',
  (select count(*) from bench_applied b
   where (select count(*) from applied_actions a
          where a.user_id = b.owner and a.key = b.key and a.tool = b.tool) <> 1));
select pg_temp.check('no ledger record the players did not see applied',
  (select count(*) from ledger l
   where not exists (select 1 from bench_applied b where b.owner = l.owner and b.key = l.key)));

select pg_temp.check('gold moved only by work and the market',
  (select count(*) from users u join bench_users s on s.id = u.id
   where u.gold <> s.gold
     + coalesce((select sum((l.result ->> 'earned')::bigint) from ledger l where l.who = u.id and l.tool = 'do_work'), 0)
     - coalesce((select sum((l.result ->> 'cost')::bigint) from ledger l where l.who = u.id and l.tool = 'buy_item'), 0)));
select pg_temp.check('bread moved only by buying and eating',
  (select count(*) from users u join bench_users s on s.id = u.id
   where coalesce((select i.quantity from inventory i where i.user_id = u.id and i.item_name = 'bread'), 0)
     <> coalesce((select b.quantity from bench_inventory b where b.user_id = u.id and b.item_name = 'bread'), 0)
     + coalesce((select sum((l.result ->> 'quantity')::bigint) from ledger l
                 where l.who = u.id and l.tool = 'buy_item' and l.result ->> 'purchased' = 'bread'), 0)
     - coalesce((select sum((l.result ->> 'quantity')::bigint) from ledger l
                 where l.who = u.id and l.tool = 'consume_item' and l.result ->> 'consumed' = 'bread'), 0)));

select pg_temp.check('each battle side raised by its blows once: as the blows'' log and the ledger say',
  (select count(*) from battles t join bench_battles s on s.id = t.id, (values (1), (2)) side(n)
   where (case side.n when 1 then t.community1_damage - s.community1_damage
                      else t.community2_damage - s.community2_damage end)
         is distinct from coalesce((select sum(b.damage) from battle_blows b
                     where b.battle_id = t.id and b.side = side.n
                       and b.struck_at >= (select at from bench_start)), 0)
      or (case side.n when 1 then t.community1_damage - s.community1_damage
                      else t.community2_damage - s.community2_damage end)
         is distinct from coalesce((select sum((l.result ->> 'damage')::bigint) from ledger l
                     where l.tool = 'join_battle' and (l.result ->> 'battle_id')::bigint = t.id
                       and (l.result ->> 'side')::integer = side.n), 0)));

select pg_temp.check('one vote per account per proposal',
  (select count(*) from (select v.proposal_id, account_of(v.user_id) from votes v
                         group by 1, 2 having count(*) > 1) twice));
select pg_temp.check('as many new votes as the ledger applied',
  (select abs((select count(*) from votes) - (select votes from bench_start)
            - (select count(*) from ledger where tool = 'vote_on_proposal'))));

select pg_temp.check('one post per applied key',
  (select abs((select count(*) from posts where content like 'create_post load-%')
            - (select count(*) from ledger where tool = 'create_post'))
        + (select count(*) from (select content from posts where content like 'create_post load-%'
                                 group by content having count(*) > 1) twice)));
select pg_temp.check('one message per applied key',
  (select abs((select count(*) from messages where content like 'send_message load-%')
            - (select count(*) from ledger where tool = 'send_message'))
        + (select count(*) from (select content from messages where content like 'send_message load-%'
                                 group by content having count(*) > 1) twice)));

do $$ begin raise notice '% ledger records checked', (select count(*) from ledger); end $$;
