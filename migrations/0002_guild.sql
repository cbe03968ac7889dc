-- The guild-management loop (seed 001): the state of the guild by tick, and the
-- proposals the guild agent makes against it.

create table game_state (
  id bigint generated always as identity primary key,
  tick integer not null unique check (tick >= 0),
  gold integer not null default 100 check (gold >= 0),
  food integer not null default 100 check (food >= 0),
  morale integer not null default 50 check (morale between 0 and 100),
  created_at timestamptz not null default now()
);

create table guild_proposals (
  id bigint generated always as identity primary key,
  state_id bigint not null references game_state (id) on delete cascade,
  title text not null,
  effects jsonb not null default '{}',
  status text not null default 'pending'
    check (status in ('pending', 'accepted', 'rejected', 'applied')),
  created_at timestamptz not null default now()
);
