#!/usr/bin/env bash
# A/B speed of two builds on one trace (docs/performance.md#seams-cost): runs `tracelab bench FILE` of build A, then
# of build B, $ROUNDS times alternately (each run: --repeat $REPEAT, read and read + analysis on one thread), and
# prints per build the median over rounds of each run's median wall time and of its best CPU time (user + system),
# for read alone and read + analysis, plus B against A. Load on a shared machine moves wall time more than CPU time.
#   tools/bench-ab.sh A_DLL B_DLL TRACE                     # e.g. .../base/.../tracelab.dll .../new/.../tracelab.dll
#   ROUNDS=7 REPEAT=5 ANALYSIS=threads,kernel tools/bench-ab.sh A B TRACE
#   ENV_B="DOTNET_TieredPGO=0" tools/bench-ab.sh A B TRACE  # extra environment for one side (ENV_A likewise)
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: tools/bench-ab.sh A_DLL B_DLL TRACE" >&2; exit 2; }
A=$1 B=$2 TRACE=$3
ROUNDS=${ROUNDS:-5}
REPEAT=${REPEAT:-5}
ANALYSIS=${ANALYSIS:-threads,kernel,convoys,wakeups,smp,waitgraph}
for f in "$A" "$B" "$TRACE"; do [ -f "$f" ] || { echo "$f: no such file" >&2; exit 2; }; done
log=$(mktemp)
trap 'rm -f "$log"' EXIT

run() {  # side dll env: one bench run, its four figures appended to the log as "side what wall cpu"
  local side=$1 dll=$2 extra=$3 out
  # shellcheck disable=SC2086
  out=$(env $extra dotnet "$dll" bench "$TRACE" --repeat "$REPEAT" --analysis "$ANALYSIS" --analysis-threads 0)
  awk -v s="$side" '/^read \(decode/ { w="read" } /^read \+ analysis( \(|, one thread)/ { w="full" }
    w != "" { for (i = 1; i <= NF; i++) { if ($i == "median") m = $(i + 1); if ($i == "CPU") c = $(i + 2) }
              print s, w, m, c; w = "" }' <<<"$out" >>"$log"
}

echo "$(date -u +%FT%TZ) $ROUNDS rounds x $REPEAT runs, --analysis $ANALYSIS, $TRACE; $(uptime)"
for r in $(seq "$ROUNDS"); do
  run A "$A" "${ENV_A:-}"
  run B "$B" "${ENV_B:-}"
  echo "round $r: $(tail -4 "$log" | tr '\n' ' ')"
done
echo "after: $(uptime)"
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for w in read full; do
  for col in 3 4; do
    a=$(awk -v w=$w -v c=$col '$1 == "A" && $2 == w { print $c }' "$log" | median)
    b=$(awk -v w=$w -v c=$col '$1 == "B" && $2 == w { print $c }' "$log" | median)
    name=$([ $col = 3 ] && echo "median wall" || echo "best CPU")
    awk -v w=$w -v n="$name" -v a="$a" -v b="$b" \
      'BEGIN { printf "%-5s %-12s A %.3f s  B %.3f s  B/A %+.1f %%\n", w, n, a, b, (b / a - 1) * 100 }'
  done
done
