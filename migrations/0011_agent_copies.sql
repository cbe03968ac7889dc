-- Each player their own agents: the tables (the functions are 0012_claim_agents.sql).
--
-- A new player owns no agents: 0009's `agent_owners` gives the seed's Dotty, Brannoc
-- and Mira to the seeded player (3) only, and one player must never act as another's
-- agent. So the world offers starter agents (`starter_agents`), and `claim_agents()`
-- (0012) gives each player their own copy of each, remembered as that starter's copy
-- in `agent_copies` (one per player and starter). Only the game writes both tables;
-- anyone reads them. The local store builds these tables from this file (the
-- functions' twin is src/world/functions/agents.rs), so it holds tables only.

create table starter_agents (
  agent_id bigint primary key references users (id) on delete cascade
);

create table agent_copies (
  agent_id bigint primary key references users (id) on delete cascade,
  template_id bigint not null references users (id) on delete cascade,
  owner_id bigint not null references users (id) on delete cascade,
  unique (owner_id, template_id)
);

alter table starter_agents enable row level security;
alter table agent_copies enable row level security;
grant select on starter_agents, agent_copies to anon, authenticated;
create policy public_read on starter_agents for select to anon, authenticated using (true);
create policy public_read on agent_copies for select to anon, authenticated using (true);

insert into starter_agents (agent_id) values (1), (2), (4);
