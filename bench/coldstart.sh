#!/usr/bin/env bash
# Cold start: whole-process wall and CPU time of a fresh JVM that calls ProcLive.resolveOwner() and one
# check (dev.proclive.ColdStartMain) against an empty main (dev.proclive.EmptyMain) on the same
# class path, runs alternating so both see the same machine. Two floors run alongside
# (dev.proclive.FloorMain): the same reads done by one plain class, and those reads plus loading the
# three API types the call names (ProcLive, Identity, Liveness) from the library jar, running none
# of their code: what any library shipped in that jar pays before it does anything. Layouts:
#   dir: the mains in a class directory, proclive and its dependencies as jars;
#   jar: the mains packed in a jar too, as an application ships. A JVM's first jar costs ~5 ms
#        of JDK zip and NIO start-up whoever opens it; here the empty main pays it as well;
#   cds: the jar layout with an application class-data archive (JDK 13+), made once by a run
#        with -XX:ArchiveClassesAtExit and used by both mains: what a hook can do about it.
#
#   bench/coldstart.sh [RUNS]        (default 40 of each per layout, after 5 warm-up runs;
#                                     COLDSTART_BUILT=1 skips the build and measures target/ as it is)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-40}
java=${JAVA:-java}

if [ "${COLDSTART_BUILT:-}" != 1 ]; then # COLDSTART_BUILT=1: measure what target/ holds already
  mvn -B -q -Dstyle.color=never -DskipTests package dependency:build-classpath \
      -Dmdep.outputFile=target/runtime.classpath -DincludeScope=runtime >/dev/null
fi
version=$(sed -n 's:.*<version>\(.*\)</version>.*:\1:p' pom.xml | head -1)
libs="target/proclive-$version.jar:$(cat target/runtime.classpath)"
mkdir -p target/coldstart
sizes=target/coldstart/sizes # the library jar's entries: size first, name last
jar --list --verbose --file "target/proclive-$version.jar" >"$sizes"
(cd target/test-classes && jar --create --file ../coldstart/mains.jar \
    dev/proclive/EmptyMain.class dev/proclive/ColdStartMain.class dev/proclive/FloorMain.class)

jvm_opts=()
# CPU time of a run, all threads: perf's task-clock where perf may count (to the microsecond),
# else the shell's user + system time (to the millisecond)
perf_ok=$(perf stat -x, -e task-clock true 2>&1 >/dev/null | grep -c task-clock || true)
run_ns() { # class path, main class and its arguments: prints one run's wall time in ns and its CPU time (all threads) in ns
  local start end cpu
  start=$(date +%s%N)
  if [ "$perf_ok" = 1 ]; then
    cpu=$(perf stat -x, -e task-clock "$java" "${jvm_opts[@]}" -cp "$1" "${@:2}" 2>&1 >/dev/null |
      awk -F, '/task-clock/ {printf "%d", $1 * 1e6}')
  else
    cpu=$({ TIMEFORMAT='%3U %3S'; time "$java" "${jvm_opts[@]}" -cp "$1" "${@:2}" >/dev/null 2>&1; } 2>&1 |
      awk '{printf "%d", ($1 + $2) * 1e9}')
  fi
  end=$(date +%s%N)
  echo "$((end - start)) $cpu"
}

median_ms() { # column (1 wall, 2 CPU), then runs as run_ns printed them
  local col=$1
  shift
  printf '%s\n' "$@" | awk -v c="$col" '{print $c}' | sort -n |
    awk '{v[NR]=$1} END {m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "%.1f", m/1e6}'
}

over() { # a median, the empty main's: the difference, to a tenth of a millisecond
  awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", a-b}'
}

measure() { # layout name, class path
  local cp=$2 empty=() cold=() plain=() api=() e c ec cc
  for _ in 1 2 3 4 5; do run_ns "$cp" dev.proclive.EmptyMain >/dev/null; run_ns "$cp" dev.proclive.ColdStartMain >/dev/null; done
  for _ in $(seq "$runs"); do
    empty+=("$(run_ns "$cp" dev.proclive.EmptyMain)")
    cold+=("$(run_ns "$cp" dev.proclive.ColdStartMain)")
    if [ "$1" != cds ]; then # an archive holds what its one training run loaded; the floors load other classes
      plain+=("$(run_ns "$cp" dev.proclive.FloorMain)")
      api+=("$(run_ns "$cp" dev.proclive.FloorMain api)")
    fi
  done
  e=$(median_ms 1 "${empty[@]}"); c=$(median_ms 1 "${cold[@]}")
  # CPU time is steadier than wall time on a shared machine: a busy neighbour delays a run, it
  # does not make it work more
  ec=$(median_ms 2 "${empty[@]}"); cc=$(median_ms 2 "${cold[@]}")
  # proclive classes the path loads, the main itself aside, and the bytes of their class files
  # (ColdStartIT holds them to 15 and 80,000 at most)
  local classes n bytes
  classes=$("$java" "${jvm_opts[@]}" -verbose:class -cp "$cp" dev.proclive.ColdStartMain |
    sed -n 's/.* \(dev\.proclive\.[^ ]*\) source: .*/\1/p' | grep -vx 'dev\.proclive\.ColdStartMain' || true)
  n=$(printf '%s\n' "$classes" | grep -c . || true)
  bytes=$(printf '%s\n' "$classes" | tr . / | sed 's/$/.class/' |
    awk 'NR == FNR {want[$0] = 1; next} ($NF in want) {sum += $1} END {print sum + 0}' - "$sizes")
  printf '%-4s  empty main %6s ms   resolveOwner + check %6s ms   cost %5s ms   CPU cost %5s ms   %s proclive classes, %s bytes\n' \
    "$1" "$e" "$c" "$(over "$c" "$e")" "$(over "$cc" "$ec")" "$n" "$bytes"
  if [ "$1" != cds ]; then
    printf '%-4s  floor: the same reads in one plain class  cost %5s ms   CPU cost %5s ms\n' "$1" \
      "$(over "$(median_ms 1 "${plain[@]}")" "$e")" "$(over "$(median_ms 2 "${plain[@]}")" "$ec")"
    printf '%-4s  floor: those reads + ProcLive, Identity, Liveness loaded from the jar  cost %5s ms   CPU cost %5s ms\n' "$1" \
      "$(over "$(median_ms 1 "${api[@]}")" "$e")" "$(over "$(median_ms 2 "${api[@]}")" "$ec")"
  fi
}

echo "cold start, medians of $runs runs each ($("$java" -version 2>&1 | sed -n 1p); target: cost <= 5 ms)"
measure dir "target/test-classes:$libs"
measure jar "target/coldstart/mains.jar:$libs"
rm -f target/coldstart/app.jsa
"$java" -XX:ArchiveClassesAtExit=target/coldstart/app.jsa -cp "target/coldstart/mains.jar:$libs" \
    dev.proclive.ColdStartMain >/dev/null 2>&1
jvm_opts=(-XX:SharedArchiveFile=target/coldstart/app.jsa)
measure cds "target/coldstart/mains.jar:$libs"
