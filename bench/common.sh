# Sourced by bench/launcher.sh and bench/ancestor.sh, from the project's directory: the JDK
# (JAVA_HOME's, else java on PATH), a build made with it, a scratch directory removed on exit, and
# the timing helpers both use.
if [ -n "${JAVA_HOME:-}" ]; then java=$JAVA_HOME/bin/java; else java=java; fi
mvn -B -q -Dstyle.color=never -DskipTests package >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The wall time of one run of "$@", in nanoseconds, its output discarded.
ns() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $((e - s)); }
# The median of nanosecond figures, in milliseconds with one decimal.
median_ms() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "%.1f", m/1e6}'; }
# $1 / $2, two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a/b}'; }
