#!/usr/bin/env bash
# Native AOT vs JIT build (docs/performance.md "busy-aot"). For each busy-system trace in $BUSY: tools/bench-busy.sh
# with the JIT build (`dotnet tracelab.dll`, framework-dependent Release) and then with the Native AOT build
# (artifacts/linux-x64-aot/tracelab), each alternated with perf sched; then, on the event-heavy trace $HEAVY,
# `tracelab bench --analysis-threads 0` with both builds alternated $REPEAT times (CPU per event: the pass alone).
#   BUSY="busy.perf.data busy-tracefs/trace.dat" HEAVY=mutex200k/trace.dat REPEAT=5 tools/bench-aot.sh
#   NO_BUILD=1 ...    time the builds as they are (default: build Release and publish the AOT profile first)
#   AOT=DIR/tracelab  time another AOT build (e.g. one published with -p:OptimizationPreference=Speed)
set -euo pipefail
cd "$(dirname "$0")/.."
REPEAT=${REPEAT:-5}
OUT=${OUT:-/tmp/tracelab-aot-bench}
JIT="dotnet src/TraceLab.Cli/bin/Release/net8.0/tracelab.dll"
AOT=${AOT:-artifacts/linux-x64-aot/tracelab}
mkdir -p "$OUT"
if [ -z "${NO_BUILD:-}" ]; then
  dotnet build -c Release src/TraceLab.Cli -v q >/dev/null
  dotnet publish src/TraceLab.Cli -p:PublishProfile=linux-x64-aot -v q >/dev/null
fi
echo "== load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for trace in ${BUSY:-}; do
  for build in "$JIT" "$AOT"; do
    TRACE=$trace REPEAT=$REPEAT NO_BUILD=1 OUT=$OUT TRACELAB=$build tools/bench-busy.sh
  done
done
if [ -n "${HEAVY:-}" ]; then
  read -r -a jit <<<"$JIT"
  : >"$OUT/heavy-jit.txt"; : >"$OUT/heavy-aot.txt"
  for _ in $(seq "$REPEAT"); do
    cat "$HEAVY" >/dev/null
    "${jit[@]}" bench "$HEAVY" --repeat 1 --analysis-threads 0 >>"$OUT/heavy-jit.txt"
    cat "$HEAVY" >/dev/null
    "$AOT" bench "$HEAVY" --repeat 1 --analysis-threads 0 >>"$OUT/heavy-aot.txt"
  done
  echo
  echo "== $HEAVY: tracelab bench --analysis-threads 0, $REPEAT runs each, alternated (CPU ns/event of each run)"
  for b in jit aot; do
    printf "%s read: %s; read + analysis: %s\n" "$b" \
      "$(grep '^read (decode' "$OUT/heavy-$b.txt" | sed 's/.*= \([0-9]*\) ns\/event.*/\1/' | sort -n | tr '\n' ' ')" \
      "$(grep -A1 '^read + analysis' "$OUT/heavy-$b.txt" | grep -o '= [0-9]* ns/event' | tr -dc '0-9 \n' |
         sort -n | tr '\n' ' ')"
  done
fi
echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg)"
