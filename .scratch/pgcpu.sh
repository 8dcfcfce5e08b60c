#!/bin/bash
# prints every second: CPU (cores) by postgres process kind
declare -A prev
while true; do
  declare -A cur=(); declare -A sum=()
  for p in $(pgrep -u postgres); do
    t=$(awk '{print $14+$15}' /proc/$p/stat 2>/dev/null) || continue
    title=$(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null | awk '{print $3$4}')
    case "$title" in *writer*|*checkpointer*|*walwriter*|*autovacuum*|*stats*|*logical*|*archiver*) k=$title;; *) k=backend;; esac
    [ -z "$t" ] && continue
    cur[$p]=$t
    if [ -n "${prev[$p]}" ]; then sum[$k]=$(( ${sum[$k]:-0} + t - ${prev[$p]} )); fi
  done
  line="$(date +%S)"; for k in "${!sum[@]}"; do line="$line $k=${sum[$k]}"; done; echo "$line"
  prev=(); for p in "${!cur[@]}"; do prev[$p]=${cur[$p]}; done
  sleep 1
done
