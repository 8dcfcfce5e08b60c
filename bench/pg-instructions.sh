#!/usr/bin/env bash
# PostgreSQL's instructions per operation (create source, create charge, list charges), counted
# with callgrind: repeatable whatever else the machine is doing, unlike rates. Needs valgrind and
# PostgreSQL's server binaries; run as root (the server runs as the postgres user) or as postgres.
# Usage: bash bench/pg-instructions.sh [N]   (N operations of each kind, default 100;
# PGI_OPS="list" narrows the kinds). Also prints the WAL the operations wrote, per operation.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-100}
PORT=${PGI_PORT:-5499}
source bench/callgrind-postgres.sh
start_counted
# the instructions of every backend named
all_instructions() { local sum=0; for pid in "$@"; do sum=$((sum + $(instructions "$DIR/cg.$pid"))); done; echo $sum; }
for op in ${PGI_OPS:-source charge list}; do
  db="pgi_$op"
  psql -q -h "$DIR" -p "$PORT" -U postgres -d postgres -c "CREATE DATABASE $db"
  url="postgres://postgres@/$db?host=$DIR&port=$PORT"
  idle=$(PGI_URL=$url PGI_OP=$op PGI_N=0 node --import tsx bench/pg-instructions.ts | tail -1)
  busy=$(PGI_URL=$url PGI_OP=$op PGI_N=$N node --import tsx bench/pg-instructions.ts | tail -1)
  sleep 2
  echo "$op: backends $idle / $busy"
  echo "$op: $(( ($(all_instructions $busy) - $(all_instructions $idle)) / N )) instructions per operation in PostgreSQL"
done
