#!/usr/bin/env bash
# The proclive command against java -jar: whole-process wall time of `owner`, runs alternating so
# both see the same machine, medians and ratios of one run:
#   warm:  target/proclive owner with its class-data archive made  vs  java -jar target/proclive-cli.jar owner
#   first: target/proclive owner making the archive (a fresh cache each run)  vs  the same java -jar
#
#   bench/launcher.sh [RUNS]        (default 30 of each, after 3 warm-up runs)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-30}
java=${JAVA:-java}
mvn -B -q -Dstyle.color=never -DskipTests package >/dev/null
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT

ns() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $((e - s)); }
median_ms() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "%.1f", m/1e6}'; }

plain=(); warm=(); first=()
for _ in 1 2 3; do
  ns "$java" -jar target/proclive-cli.jar owner >/dev/null
  XDG_CACHE_HOME=$cache/warm ns env PROCLIVE_JAVA="$java" target/proclive owner >/dev/null
done
for _ in $(seq 1 "$runs"); do
  plain+=("$(ns "$java" -jar target/proclive-cli.jar owner)")
  warm+=("$(XDG_CACHE_HOME=$cache/warm ns env PROCLIVE_JAVA="$java" target/proclive owner)")
  rm -rf "$cache/first"
  first+=("$(XDG_CACHE_HOME=$cache/first ns env PROCLIVE_JAVA="$java" target/proclive owner)")
  sleep 3 # its archive is made in the background: let that end before the next runs
done
p=$(median_ms "${plain[@]}"); w=$(median_ms "${warm[@]}"); f=$(median_ms "${first[@]}")
echo "$("$java" -version 2>&1 | head -1), $(uname -sr), $(nproc) cores; $runs runs each, alternating"
echo
echo "| run | median | × java -jar | target |"
echo "|---|---:|---:|---|"
echo "| java -jar target/proclive-cli.jar owner | $p ms | 1.00 | |"
echo "| target/proclive owner, archive made | $w ms | $(awk -v a="$w" -v b="$p" 'BEGIN {printf "%.2f", a/b}') | ≤ 0.6 |"
echo "| target/proclive owner, first run (makes it) | $f ms | $(awk -v a="$f" -v b="$p" 'BEGIN {printf "%.2f", a/b}') | ≤ 1.5 |"
