-- The game world of the universal agent workflow (seed 000): the agents' and players'
-- users, their communities and relationships, battles, the market, messages and
-- posts, governance, and the agents' memories.

create table users (
  id bigint generated always as identity primary key,
  username text not null unique,
  -- The Supabase Auth user (the JWT's `sub`) who plays as this user; none for the
  -- world's own characters. `world_user()` reads it.
  auth_id text unique,
  is_agent boolean not null default false,
  health integer not null default 100 check (health between 0 and 100),
  energy integer not null default 100 check (energy between 0 and 100),
  morale integer not null default 50 check (morale between 0 and 100),
  gold integer not null default 0 check (gold >= 0),
  created_at timestamptz not null default now()
);

create table communities (
  id bigint generated always as identity primary key,
  name text not null unique,
  description text,
  created_at timestamptz not null default now()
);

create table user_communities (
  user_id bigint not null references users (id) on delete cascade,
  community_id bigint not null references communities (id) on delete cascade,
  is_primary boolean not null default false,
  -- How much the member cares for the community, 0 (not at all) to 100.
  loyalty integer not null default 50 check (loyalty between 0 and 100),
  primary key (user_id, community_id)
);

create table relationships (
  user_id bigint not null references users (id) on delete cascade,
  target_id bigint not null references users (id) on delete cascade,
  affinity integer not null default 0 check (affinity between -100 and 100),
  kind text not null default 'acquaintance',
  primary key (user_id, target_id)
);

create table battles (
  id bigint generated always as identity primary key,
  community1_id bigint not null references communities (id),
  community2_id bigint not null references communities (id),
  status text not null default 'active' check (status in ('active', 'finished')),
  community1_damage integer not null default 0,
  community2_damage integer not null default 0,
  started_at timestamptz not null default now()
);

create table battle_participants (
  battle_id bigint not null references battles (id) on delete cascade,
  user_id bigint not null references users (id) on delete cascade,
  side integer not null check (side in (1, 2)),
  damage_dealt integer not null default 0 check (damage_dealt >= 0),
  primary key (battle_id, user_id)
);

create table market_items (
  id bigint generated always as identity primary key,
  name text not null unique,
  price integer not null check (price >= 0),
  available boolean not null default true,
  effects jsonb not null default '{}'
);

create table jobs (
  name text primary key,
  pay integer not null check (pay >= 0),
  energy_cost integer not null check (energy_cost between 0 and 100)
);

create table inventory (
  user_id bigint not null references users (id) on delete cascade,
  item_name text not null references market_items (name),
  quantity integer not null default 1 check (quantity >= 0),
  primary key (user_id, item_name)
);

create table messages (
  id bigint generated always as identity primary key,
  sender_id bigint not null references users (id),
  receiver_id bigint not null references users (id),
  reply_to bigint references messages (id),
  content text not null,
  created_at timestamptz not null default now()
);

create table posts (
  id bigint generated always as identity primary key,
  author_id bigint not null references users (id),
  community_id bigint references communities (id),
  content text not null,
  created_at timestamptz not null default now()
);

create table proposals (
  id bigint generated always as identity primary key,
  community_id bigint not null references communities (id),
  author_id bigint not null references users (id),
  title text not null,
  status text not null default 'open' check (status in ('open', 'passed', 'rejected')),
  created_at timestamptz not null default now()
);

create table votes (
  proposal_id bigint not null references proposals (id) on delete cascade,
  user_id bigint not null references users (id) on delete cascade,
  in_favour boolean not null,
  primary key (proposal_id, user_id)
);

create table memories (
  id bigint generated always as identity primary key,
  user_id bigint not null references users (id) on delete cascade,
  content text not null,
  importance integer not null default 1 check (importance between 1 and 10),
  created_at timestamptz not null default now()
);
