#!/usr/bin/env bash
# A throwaway backend on loopback: PostgreSQL 15 (a cluster in a temp dir, on a free
# port) with the migrations applied, postrust serving PostgREST's API in front of it,
# and tests/servers/auth_server.py answering Supabase Auth with JWTs postrust accepts
# (and passing /rest/v1/ on to postrust: one project URL, as Supabase gives).
#   scripts/backend.sh start DIR [SQL...]
#                                  starts them, writes DIR/env (FAMILIAR_PG_PORT,
#                                  FAMILIAR_POSTGREST_URL, FAMILIAR_ANON_KEY,
#                                  FAMILIAR_SUPABASE_URL: auth + rest); returns.
#                                  Extra SQL files run after the migrations, before
#                                  postrust reads the schema.
#   scripts/backend.sh stop DIR    stops both and removes DIR
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

PG_BIN=/usr/lib/postgresql/15/bin
# The JWT secret of this throwaway server only; the anon key below is signed with it.
JWT_SECRET=familiar-throwaway-jwt-secret-0123456789abcdef
as_postgres() { runuser -u postgres -- "$@"; }

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# An HS256 JWT for `role`, signed with the throwaway secret (what Supabase calls a key).
jwt_for() {
  python3 - "$1" "$JWT_SECRET" <<'PY'
import base64, hashlib, hmac, json, sys
enc = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
head = enc(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
body = enc(json.dumps({"role": sys.argv[1], "iss": "familiar-tests"}).encode())
sig = hmac.new(sys.argv[2].encode(), f"{head}.{body}".encode(), hashlib.sha256).digest()
print(f"{head}.{body}.{enc(sig)}")
PY
}

start() {
  local dir=$1 pg_port api_port
  shift
  mkdir -p "$dir"
  chown postgres "$dir"
  pg_port=$(free_port)
  as_postgres "$PG_BIN/initdb" -D "$dir/data" -U postgres -A trust --no-sync -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log"
  as_postgres "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w \
    -o "-p $pg_port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null
  local psql=(psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres)
  "${psql[@]}" <<'SQL'
create role anon nologin;
create role authenticated nologin;
create role authenticator login password 'familiar-throwaway' noinherit;
grant anon, authenticated to authenticator;
SQL
  local migration
  for migration in migrations/*.sql "$@"; do
    "${psql[@]}" -f "$migration" >/dev/null
  done
  api_port=$(free_port)
  DATABASE_URL="postgres://authenticator:familiar-throwaway@127.0.0.1:$pg_port/postgres" \
  PGRST_COMPAT_MODE=true PGRST_DB_ANON_ROLE=anon PGRST_DB_SCHEMAS=public \
  PGRST_SERVER_HOST=127.0.0.1 PGRST_SERVER_PORT="$api_port" PGRST_JWT_SECRET="$JWT_SECRET" \
    setsid postrust >"$dir/postrust.log" 2>&1 &
  echo $! >"$dir/postrust.pid"
  for _ in $(seq 100); do
    curl -sf -o /dev/null "http://127.0.0.1:$api_port/users?select=id&limit=1" && break
    kill -0 "$(cat "$dir/postrust.pid")" 2>/dev/null || { cat "$dir/postrust.log"; die "postrust stopped"; }
    sleep 0.1
  done
  curl -sf -o /dev/null "http://127.0.0.1:$api_port/users?select=id&limit=1" ||
    { cat "$dir/postrust.log"; die "postrust did not answer"; }
  setsid python3 tests/servers/auth_server.py 0 "$JWT_SECRET" 3600 "http://127.0.0.1:$api_port" \
    >"$dir/auth.log" 2>&1 &
  echo $! >"$dir/auth.pid"
  local auth_port=
  for _ in $(seq 50); do
    auth_port=$(awk '/^listening on/ { print $3 }' "$dir/auth.log")
    [ -n "$auth_port" ] && break
    sleep 0.1
  done
  [ -n "$auth_port" ] || { cat "$dir/auth.log"; die "the auth server did not start"; }
  cat >"$dir/env" <<ENV
export FAMILIAR_PG_PORT=$pg_port
export FAMILIAR_POSTGREST_URL=http://127.0.0.1:$api_port
export FAMILIAR_ANON_KEY=$(jwt_for anon)
export FAMILIAR_SUPABASE_URL=http://127.0.0.1:$auth_port
ENV
}

stop() {
  local dir=$1
  [ -d "$dir" ] || return 0
  if [ -f "$dir/postrust.pid" ]; then kill -- "-$(cat "$dir/postrust.pid")" 2>/dev/null || true; fi
  if [ -f "$dir/auth.pid" ]; then kill -- "-$(cat "$dir/auth.pid")" 2>/dev/null || true; fi
  if [ -f "$dir/data/postmaster.pid" ]; then as_postgres "$PG_BIN/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true; fi
  rm -rf "$dir"
}

case "${1:-}" in
  start) start "${2:?a directory}" "${@:3}" ;;
  stop) stop "${2:?a directory}" ;;
  *) die "usage: backend.sh start|stop DIR" ;;
esac
