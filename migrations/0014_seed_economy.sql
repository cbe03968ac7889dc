-- Seed 000's own economy (issue 41): food priced 10 gold that restores 50 energy, and
-- jobs that pay mining 50 gold for 20 energy, farming 30 for 10, trading 40 for 15.
-- 0008 refused any job or market item that lets a cycle of work, buy and eat make
-- gold (`no_gold_loop`). The seed's numbers are such a cycle (mine for 50 gold, buy a
-- meal for 10, eat it for 50 energy: 40 gold and 30 energy up a round), and the seed
-- makes that very chain — work, buy, eat — its agents' way to restore their energy
-- (its examples 3 and 4). A world that refuses the seed's numbers cannot play the
-- seed, so the guard is lifted here, and the local store has none either: enforced in
-- neither store, the same in both.
--
-- What an endless purse could buy stays bounded elsewhere: gold never passes between
-- users (no function moves it), the items it buys only restore the buyer's own stats,
-- clamped to 0-100, and what stats do to others — battle damage — is capped per
-- account and per hour by 0013. `gold_loop()` stays, as a report: it names the job
-- and item that make such a cycle, for an operator who wants an economy without one
-- to check theirs (and to put 0008's triggers back, in both stores).

drop trigger no_gold_loop on jobs;
drop trigger no_gold_loop on market_items;
drop function refuse_gold_loop();

comment on function gold_loop() is
  'A job and a market item that let work, buy and eat make gold, or null. A report '
  'only since 0014: seed 000''s own economy is such a cycle, and no store refuses it.';
