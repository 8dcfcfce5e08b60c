#!/usr/bin/env bash
# PostgreSQL's instructions per operation (create source, create charge, list charges), counted
# with callgrind: repeatable whatever else the machine is doing, unlike rates. Needs valgrind and
# PostgreSQL's server binaries; run as root (the server runs as the postgres user) or as postgres.
# Usage: bash bench/pg-instructions.sh [N]   (N operations of each kind, default 100;
# PGI_OPS="list" narrows the kinds)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-100}
BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)}
DIR=$(mktemp -d /tmp/jackdaw-pgi.XXXXXX)
PORT=${PGI_PORT:-5499}
as_pg() { if [ "$(id -un)" = postgres ]; then bash -c "$1"; else su postgres -c "$1"; fi; }
chown postgres "$DIR" 2>/dev/null || true
as_pg "$BIN/initdb -D $DIR/data -A trust >/dev/null"
as_pg "cd $DIR && nohup valgrind --tool=callgrind --trace-children=yes --callgrind-out-file=$DIR/cg.%p \
  $BIN/postgres -D $DIR/data -p $PORT -k $DIR -c autovacuum=off -c listen_addresses= > $DIR/server.log 2>&1 &"
trap 'as_pg "$BIN/pg_ctl -D $DIR/data stop -m fast" >/dev/null 2>&1 || true' EXIT
for _ in $(seq 1 120); do pg_isready -q -h "$DIR" -p "$PORT" && break; sleep 1; done
count() { grep -h '^summary\|^totals' "$DIR/cg.$1" | head -1 | awk '{print $2}'; }
for op in ${PGI_OPS:-source charge list}; do
  db="pgi_$op"
  psql -q -h "$DIR" -p "$PORT" -U postgres -d postgres -c "CREATE DATABASE $db"
  url="postgres://postgres@/$db?host=$DIR&port=$PORT"
  idle=$(PGI_URL=$url PGI_OP=$op PGI_N=0 node --import tsx bench/pg-instructions.ts | tail -1)
  busy=$(PGI_URL=$url PGI_OP=$op PGI_N=$N node --import tsx bench/pg-instructions.ts | tail -1)
  sleep 2
  echo "$op: $(( ($(count "$busy") - $(count "$idle")) / N )) instructions per operation in PostgreSQL"
done
