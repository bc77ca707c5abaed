#!/usr/bin/env bash
# Analysis-only A/B (tests/TraceLab.Benchmarks harness: events decoded into memory once, best-of-R thread CPU time per
# kind set): runs the harness of each build in turn, $ROUNDS times, and prints each build's per-run ns/event (sorted;
# take the median). A build is a worktree (its tests/TraceLab.Benchmarks Release output) or a copy of that output
# folder. Build first: dotnet build tests/TraceLab.Benchmarks -c Release.
#   TRACELAB_BENCH_TRACE=path/to/trace.dat tools/harness-ab.sh BUILD_A BUILD_B [...] [-- kinds...]
#   ENV_ALL="DOTNET_TieredPGO=0" tools/harness-ab.sh ...      # extra environment for every run
set -euo pipefail
builds=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do builds+=("$1"); shift; done
[ $# -gt 0 ] && shift
KINDS=("$@"); [ ${#KINDS[@]} -gt 0 ] || KINDS=(threads threads,kernel,convoys,wakeups,smp,waitgraph)
[ ${#builds[@]} -ge 1 ] || { echo "usage: tools/harness-ab.sh BUILD... [-- kinds...]" >&2; exit 2; }
ROUNDS=${ROUNDS:-3} EVENTS=${EVENTS:-2000000} R=${R:-6}
log=$(mktemp); trap 'rm -f "$log"' EXIT
dll() {
  local d=$1/tests/TraceLab.Benchmarks/bin/Release/net8.0/TraceLab.Benchmarks.dll
  [ -f "$d" ] && echo "$d" || echo "$1/TraceLab.Benchmarks.dll"
}
echo "$(uptime)"
for r in $(seq "$ROUNDS"); do
  for i in "${!builds[@]}"; do
    # shellcheck disable=SC2086
    env ${ENV_ALL:-} dotnet "$(dll "${builds[$i]}")" harness --events "$EVENTS" --rounds "$R" "${KINDS[@]}" |
      tail -n ${#KINDS[@]} | awk -v s="$i" '{ print s, $1, $2 }' >>"$log"
  done
done
echo "$(uptime)"
for k in "${KINDS[@]}"; do
  for i in "${!builds[@]}"; do
    printf '%-30s %-46s %s\n' "$(basename "${builds[$i]}")" "$k" \
      "$(awk -v s="$i" -v k="$k" '$1 == s && $2 == k { print $3 }' "$log" | sort -g | tr '\n' ' ')"
  done
done
