#!/usr/bin/env bash
# The proclive command against java -jar: whole-process wall time, runs alternating so all see the
# same machine, medians and ratios of one run:
#   target/proclive owner, and check (an identity on stdin), with the archive the build made
#   check through a copy installed elsewhere (plain cp, new times), after its first run there made
#   its own archive
#   java -jar target/proclive-cli.jar owner
#   the JVM's own floor: an empty main started with the launcher's flags and archive (its class
#   path the CLI jar's, the empty main's directory after it, as an archive allows); and, for
#   reference, the same empty main without the archive
# The JDK is JAVA_HOME's (else java on PATH); the build is made with it, so its archive is that
# JDK's: a dynamic archive before 25, an ahead-of-time cache from 25 on.
#
#   bench/launcher.sh [RUNS]        (default 30 of each, after 3 warm-up runs)
#   BASELINE_JAR=old/proclive-cli.jar bench/launcher.sh   also times java -jar of another build's jar
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-30}
# shellcheck source=bench/common.sh
. bench/common.sh
printf 'public class Empty { public static void main(String[] a) { } }\n' > "$work/Empty.java"
"${java%java}javac" -d "$work" "$work/Empty.java" 2>/dev/null || javac -d "$work" "$work/Empty.java"
flags="-XX:TieredStopAtLevel=1 -XX:-UsePerfData -XX:+UnlockDiagnosticVMOptions -XX:-DisplayVMOutput -Xlog:disable -Xlog:all=off"
printf '{"pid":1,"start":"1"}' > "$work/id.json"
# The archive as the launcher uses it (see src/main/sh/proclive), for the empty main too.
kind=$(awk '{print $2}' target/proclive-cli.jsa.size 2>/dev/null || true)
case $kind in
  aot) archived="-XX:+IgnoreUnrecognizedVMOptions --enable-native-access=ALL-UNNAMED -XX:AOTCache=target/proclive-cli.jsa" ;;
  cds|cds-jar) archived="-Xshare:auto -XX:SharedArchiveFile=target/proclive-cli.jsa" ;;
  *) archived="" ;;
esac

check() { env PROCLIVE_JAVA="$java" target/proclive check < "$work/id.json"; }
mkdir "$work/opt"
cp target/proclive target/proclive-cli.jar target/proclive-cli.jsa target/proclive-cli.jsa.size "$work/opt/"
first_ns=$(ns env PROCLIVE_JAVA="$java" "$work/opt/proclive" check < "$work/id.json")
copied() { env PROCLIVE_JAVA="$java" "$work/opt/proclive" check < "$work/id.json"; }

plain=(); owner=(); checks=(); copies=(); empty=(); bare=(); base=()
for _ in 1 2 3; do
  ns "$java" -jar target/proclive-cli.jar owner >/dev/null
  ns env PROCLIVE_JAVA="$java" target/proclive owner >/dev/null
done
for _ in $(seq 1 "$runs"); do
  plain+=("$(ns "$java" -jar target/proclive-cli.jar owner)")
  owner+=("$(ns env PROCLIVE_JAVA="$java" target/proclive owner)")
  checks+=("$(ns check)")
  copies+=("$(ns copied)")
  # shellcheck disable=SC2086
  empty+=("$(ns "$java" $flags $archived -cp "target/proclive-cli.jar:$work" Empty)")
  # shellcheck disable=SC2086
  bare+=("$(ns "$java" $flags -cp "$work" Empty)")
  if [ -n "${BASELINE_JAR:-}" ]; then base+=("$(ns "$java" -jar "$BASELINE_JAR" owner)"); fi
done
p=$(median_ms "${plain[@]}"); o=$(median_ms "${owner[@]}"); c=$(median_ms "${checks[@]}"); e=$(median_ms "${empty[@]}")
n=$(median_ms "${bare[@]}"); k=$(median_ms "${copies[@]}")
echo "$("$java" -version 2>&1 | head -1), $(uname -sr), $(nproc) cores; $runs runs each, alternating;" \
  "the build's archive: $(cat target/proclive-cli.jsa.size 2>/dev/null || echo none)"
echo
echo "| run | median | × java -jar | × the empty main |"
echo "|---|---:|---:|---:|"
echo "| java -jar target/proclive-cli.jar owner | $p ms | 1.00 | $(ratio "$p" "$e") |"
echo "| target/proclive owner | $o ms | $(ratio "$o" "$p") | $(ratio "$o" "$e") |"
echo "| target/proclive check (stdin) | $c ms | $(ratio "$c" "$p") | $(ratio "$c" "$e") |"
echo "| a copy elsewhere (cp), check (stdin) | $k ms | $(ratio "$k" "$p") | $(ratio "$k" "$e") |"
echo "| an empty main, the launcher's flags and archive | $e ms | $(ratio "$e" "$p") | 1.00 |"
echo "| an empty main, the launcher's flags, no archive | $n ms | $(ratio "$n" "$p") | $(ratio "$n" "$e") |"
echo
echo "the copy's first run, which made its archive: $(awk -v a="$first_ns" 'BEGIN {printf "%.1f", a/1e6}') ms;" \
  "its check / target/proclive check: $(ratio "$k" "$c")"
if [ -n "${BASELINE_JAR:-}" ]; then
  b=$(median_ms "${base[@]}")
  echo "| java -jar \$BASELINE_JAR owner | $b ms | $(ratio "$b" "$p") | $(ratio "$b" "$e") |"
  echo
  echo "target/proclive owner / java -jar \$BASELINE_JAR owner: $(ratio "$o" "$b"); check: $(ratio "$c" "$b")"
fi
