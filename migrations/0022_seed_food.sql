-- Seed 000's food on the demo's market (issue 58): 10 gold for +50 energy, as the
-- seed's worked examples price it. 0014 lifted the guard that kept such an item out,
-- but sold none, so an agent's work → buy → eat chain still bought bread (3 gold for
-- the +1 energy 0008 left it) and ended each round 19 energy down. With food on sale
-- the chain restores energy, as the seed means it to: mining's 20 energy come back as
-- 50. The local store's seed (public/seed/world.json) sells the same row, id 5.
insert into market_items (name, price, available, effects)
  values ('food', 10, true, '{"energy": 50}')
  on conflict (name) do nothing;
