#!/bin/sh
# Ask every question of a file through walk (limit 10 and 30) and query_source on one store
# with one memtree binary, lexical only, one JSON response per line on stdout: run it with two
# builds on the same store and `cmp` the outputs (see scripts/gen-chat.py).
# usage: scripts/probe-responses.sh MEMTREE_BINARY STORE QUESTIONS_FILE
set -eu
bin=$1 store=$2 questions=$3
while IFS= read -r q; do
  json_q=$(printf '%s' "$q" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))')
  for limit in 10 30; do
    "$bin" --store "$store" --no-model --now 2026-01-01 tool "{\"mode\":\"walk\",\"query\":$json_q,\"limit\":$limit}"
  done
  "$bin" --store "$store" --no-model --now 2026-01-01 tool "{\"mode\":\"query_source\",\"query\":$json_q,\"source_kind\":\"chat\"}"
done < "$questions"
