#!/usr/bin/env bash
# A commit hook's question, as a command: `proclive ancestor` with 50 recorded owners on stdin (one
# walk, 50 answers) against `proclive owner` (one walk, one answer), both through the launcher with
# the archive the build made; runs alternating so both see the same machine; medians and their
# ratio of one run. Goal: ancestor with 50 identities ≤ 1.1 × owner.
#
#   bench/ancestor.sh [RUNS]        (default 30 of each, after 3 warm-up runs)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-30}
# shellcheck source=bench/common.sh
. bench/common.sh
owner=$(env PROCLIVE_JAVA="$java" target/proclive owner)
for i in $(seq 1 49); do
  printf '{"pid":%d,"start":"12345","host":"%s"}\n' $((4000000 + i)) "$(hostname)"
done > "$work/owners.jsonl"
printf '%s\n' "$owner" >> "$work/owners.jsonl"

ancestor() { env PROCLIVE_JAVA="$java" target/proclive ancestor < "$work/owners.jsonl"; }

for _ in 1 2 3; do ns env PROCLIVE_JAVA="$java" target/proclive owner >/dev/null; ns ancestor >/dev/null; done
o=(); a=()
for _ in $(seq 1 "$runs"); do
  o+=("$(ns env PROCLIVE_JAVA="$java" target/proclive owner)")
  a+=("$(ns ancestor)")
done
mo=$(median_ms "${o[@]}"); ma=$(median_ms "${a[@]}")
echo "$("$java" -version 2>&1 | head -1), $(nproc) cores, $runs runs each"
echo "| command | median | × owner |"
echo "|---|---:|---:|"
echo "| proclive owner | $mo ms | 1.00 |"
echo "| proclive ancestor (50 identities on stdin) | $ma ms | $(ratio "$ma" "$mo") |"
