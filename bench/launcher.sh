#!/usr/bin/env bash
# The proclive command against java -jar: whole-process wall time of `owner`, runs alternating so
# both see the same machine, medians and ratios of one run:
#   target/proclive owner (the build's class-data archive beside the jar)
#   vs java -jar target/proclive-cli.jar owner
#   and the JVM's own floor: an empty main started with the launcher's flags
#
#   bench/launcher.sh [RUNS]        (default 30 of each, after 3 warm-up runs)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-30}
java=${JAVA:-java}
mvn -B -q -Dstyle.color=never -DskipTests package >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'public class Empty { public static void main(String[] a) { } }\n' > "$work/Empty.java"
"${java%java}javac" -d "$work" "$work/Empty.java" 2>/dev/null || javac -d "$work" "$work/Empty.java"
flags="-XX:TieredStopAtLevel=1 -XX:-UsePerfData -Xshare:auto"

ns() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $((e - s)); }
median_ms() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "%.1f", m/1e6}'; }

plain=(); warm=(); empty=()
for _ in 1 2 3; do
  ns "$java" -jar target/proclive-cli.jar owner >/dev/null
  ns env PROCLIVE_JAVA="$java" target/proclive owner >/dev/null
done
for _ in $(seq 1 "$runs"); do
  plain+=("$(ns "$java" -jar target/proclive-cli.jar owner)")
  warm+=("$(ns env PROCLIVE_JAVA="$java" target/proclive owner)")
  # shellcheck disable=SC2086
  empty+=("$(ns "$java" $flags -cp "$work" Empty)")
done
p=$(median_ms "${plain[@]}"); w=$(median_ms "${warm[@]}"); e=$(median_ms "${empty[@]}")
echo "$("$java" -version 2>&1 | head -1), $(uname -sr), $(nproc) cores; $runs runs each, alternating"
echo
echo "| run | median | × java -jar | target |"
echo "|---|---:|---:|---|"
echo "| java -jar target/proclive-cli.jar owner | $p ms | 1.00 | |"
echo "| target/proclive owner, the build's archive | $w ms | $(awk -v a="$w" -v b="$p" 'BEGIN {printf "%.2f", a/b}') | ≤ 0.2 |"
echo "| an empty main, the launcher's flags | $e ms | $(awk -v a="$e" -v b="$p" 'BEGIN {printf "%.2f", a/b}') | |"
echo
echo "target/proclive owner / the empty main: $(awk -v a="$w" -v b="$e" 'BEGIN {printf "%.2f", a/b}') (target ≤ 1.5)"
