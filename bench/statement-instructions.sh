#!/usr/bin/env bash
# PostgreSQL's instructions per execution of one statement, counted with callgrind, to compare
# forms of a query on the same data. Copies a database (pg_dump) into a server of its own run under
# `valgrind --tool=callgrind --trace-children=yes`, then for each file runs the statement as a
# prepared statement over the wire protocol (`pgbench -M prepared`, one client) once and 51
# times; the difference of the two backends' counts over 50 is one execution's work. Write `:` in
# a file as `E'\x3a'` (pgbench reads `:name` as a variable). Run as root or as postgres.
# Usage: bash bench/statement-instructions.sh postgres://…/db a.sql [b.sql …]
set -euo pipefail
SOURCE_URL=$1
shift
PORT=${SI_PORT:-5496}
source "$(dirname "$0")/callgrind-postgres.sh"
as_pg "$BIN/pg_ctl -D $DIR/data -o '-p $PORT -k $DIR -c listen_addresses=' -l $DIR/setup.log start >/dev/null"
psql -q -h "$DIR" -p "$PORT" -U postgres -d postgres -c "CREATE DATABASE copy"
pg_dump "$SOURCE_URL" | psql -q -h "$DIR" -p "$PORT" -U postgres -d copy >/dev/null
psql -q -h "$DIR" -p "$PORT" -U postgres -d copy -c "ANALYZE"
as_pg "$BIN/pg_ctl -D $DIR/data stop >/dev/null"
# the service's own session settings (src/store/db.ts)
start_counted -c TimeZone=UTC -c plan_cache_mode=force_generic_plan
newest() { ls -t "$DIR"/cg.* | head -1; }
for f in "$@"; do
  pgbench -n -h "$DIR" -p "$PORT" -U postgres -M prepared -c 1 -t 1 -f "$f" copy >"$DIR/once.out" 2>&1
  sleep 2
  once=$(newest)
  pgbench -n -h "$DIR" -p "$PORT" -U postgres -M prepared -c 1 -t 51 -f "$f" copy >"$DIR/many.out" 2>&1
  sleep 2
  many=$(newest)
  if grep -q 'aborted' "$DIR/many.out"; then
    tail -3 "$DIR/many.out"
    continue
  fi
  echo "$f: $(( ($(instructions "$many") - $(instructions "$once")) / 50 )) instructions per execution in PostgreSQL"
done
