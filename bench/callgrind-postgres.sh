# Sourced by pg-instructions.sh and statement-instructions.sh: a PostgreSQL server of their own in
# a fresh directory, run under callgrind so that every backend's instructions are counted in a
# file of its own ($DIR/cg.PID). Set PORT before sourcing. Runs the server as the postgres user.
BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)}
DIR=$(mktemp -d /tmp/jackdaw-cg.XXXXXX)
as_pg() { if [ "$(id -un)" = postgres ]; then bash -c "$1"; else su postgres -c "$1"; fi; }
chown postgres "$DIR" 2>/dev/null || true
as_pg "$BIN/initdb -D $DIR/data -A trust >/dev/null"
trap 'as_pg "$BIN/pg_ctl -D $DIR/data stop -m fast" >/dev/null 2>&1 || true' EXIT

# start_counted [server settings…]: starts the server under callgrind and waits for it
start_counted() {
  as_pg "cd $DIR && nohup valgrind --tool=callgrind --trace-children=yes --callgrind-out-file=$DIR/cg.%p \
    $BIN/postgres -D $DIR/data -p $PORT -k $DIR -c autovacuum=off -c listen_addresses= $* > $DIR/server.log 2>&1 &"
  for _ in $(seq 1 120); do pg_isready -q -h "$DIR" -p "$PORT" && return 0; sleep 1; done
  echo "the server under callgrind did not start; see $DIR/server.log" >&2
  return 1
}

# instructions FILE: the instructions one backend's file counted
instructions() { grep -h '^summary\|^totals' "$1" | head -1 | awk '{print $2}'; }
