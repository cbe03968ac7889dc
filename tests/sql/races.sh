# What tests/sql/abuse_concurrent.sh and tests/sql/load_races.sh share (sourced): proof
# that a race was one. A holder's transaction is open while its contenders run; unless
# each contender was seen waiting on a lock the holder held (pg_locks, not granted), the
# requests may have run one after another and the race proves nothing. And the cluster's
# log, read from a marker written at the start, for deadlocks; a log that cannot be read
# or holds no marker fails the check, never skips it.
# Needs: pg (psql on the race's cluster), $db, fail.

# contenders_waited NAME HOLDER_PID PREFIX N: polls, while the holder's transaction is
# open, for sessions named PREFIX1..PREFIXN waiting on an ungranted lock; fails unless
# all N were seen waiting.
contenders_waited() {
  local name=$1 holder_pid=$2 prefix=$3 n=$4 seen=" " now app i
  while kill -0 "$holder_pid" 2>/dev/null; do
    now=$(pg -At -d "$db" -c "select distinct a.application_name from pg_locks l
      join pg_stat_activity a on a.pid = l.pid
      where not l.granted and a.application_name like '${prefix}%'")
    for app in $now; do
      case "$seen" in *" $app "*) ;; *) seen="$seen$app " ;; esac
    done
    [ "$(wc -w <<<"$seen")" -ge "$n" ] && break
    sleep 0.05
  done
  local missing=()
  for i in $(seq "$n"); do
    case "$seen" in *" $prefix$i "*) ;; *) missing+=("$i") ;; esac
  done
  if [ ${#missing[@]} = 0 ]; then
    echo "ok: $name: all $n contenders waited on a lock the holder held"
  else
    fail "$name: contender(s) ${missing[*]} never waited on a lock while the holder's transaction was open (a sequence, not a race)"
  fi
}

# log_marker: writes a marker line to the cluster's log and prints it.
log_marker() {
  local marker="familiar-race-$$-$(date +%s%N)"
  pg -d "$db" -c "do \$\$ begin raise log '$marker'; end \$\$" >/dev/null
  echo "$marker"
}

# no_deadlock_since MARKER: the cluster's log after MARKER holds no "deadlock detected".
# A log that cannot be read, or that lacks the marker (not this cluster's, or not
# written), fails.
no_deadlock_since() {
  local marker=$1 log deadlocks
  log=$(pg -At -d "$db" -c "select current_setting('data_directory')")/../postgres.log
  if [ ! -r "$log" ]; then
    fail "the cluster's log $log cannot be read: the deadlock check cannot run"
  elif ! grep -qF "$marker" "$log"; then
    fail "the cluster's log $log lacks this run's marker: it is not the log the races wrote"
  else
    deadlocks=$(awk -v m="$marker" 'index($0, m) { on = 1 } on && /deadlock detected/' "$log" | wc -l)
    if [ "$deadlocks" = 0 ]; then echo "ok: no deadlock in the cluster's log"; else fail "$deadlocks deadlock(s) in $log"; fi
  fi
}
