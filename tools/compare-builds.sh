#!/usr/bin/env bash
# End-to-end speed of builds of `tracelab analyze` against `perf sched timehist -s` on one perf.data (or of the builds
# alone on a trace perf cannot read: trace.dat, .etl)
# (docs/performance.md#huge-pages-opt-in): every round runs each program once, the order rotated by one each round,
# so each is first after another program as often as the others — on the VMs we measure on, a run right after another
# program is ~0.15 s slower than one right after itself, and a fixed order favours whoever comes later. Prints per
# program the median wall time and CPU time (user + system) with their means, the median peak RSS, and every run's
# wall time.
#   tools/compare-builds.sh TRACE BUILD...          # BUILD: an executable (a published tracelab), or a quoted command
#   ROUNDS=10 tools/compare-builds.sh busy.perf.data /tmp/a/tracelab /tmp/b/tracelab
#   tools/compare-builds.sh busy.perf.data "env TRACELAB_HUGE_PAGES=1 tracelab" tracelab
#   tools/compare-builds.sh trace.dat "tracelab --analysis-threads 1" "tracelab --analysis-threads 2"
# A BUILD's own options go after the word analyze (the script runs `BUILD analyze TRACE OPTIONS --out DIR --force`):
# "tracelab --analysis-threads 2" runs `tracelab analyze TRACE --analysis-threads 2 ...`.
# Needs perf (for a perf.data) and GNU time (/usr/bin/time).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: tools/compare-builds.sh TRACE BUILD..." >&2; exit 2; }
TRACE=$1
shift
ROUNDS=${ROUNDS:-8}
[ -f "$TRACE" ] || { echo "$TRACE: no such file" >&2; exit 2; }
# perf sched reads perf.data only (its first 8 bytes: PERFILE2).
perf_reads=0
[ "$(head -c 8 "$TRACE")" = PERFILE2 ] && perf_reads=1
[ "$perf_reads" = 0 ] || command -v perf >/dev/null || { echo "perf is not installed" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time is not installed (GNU time)" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

programs=("$@")
[ "$perf_reads" = 0 ] || programs=(@perf-sched "$@")
n=${#programs[@]}
echo "$(date -u +%FT%TZ) $ROUNDS rounds, order rotated, $TRACE; $(uptime)"
for r in $(seq 0 $((ROUNDS - 1))); do
  for k in $(seq 0 $((n - 1))); do
    j=$(((k + r) % n))
    rm -rf "$dir/out"
    if [ "${programs[$j]}" = @perf-sched ]; then
      /usr/bin/time -f "%e %U %S %M" -o "$dir/time" perf sched -i "$TRACE" timehist -s >/dev/null 2>&1
    else
      read -r -a build <<<"${programs[$j]}"
      # The build's program (a command such as "env X=1 tracelab" kept whole), then analyze, then its options.
      exe=() opts=()
      for word in "${build[@]}"; do
        if [ ${#exe[@]} -gt 0 ] && [ "${word#--}" != "$word" ] || [ ${#opts[@]} -gt 0 ]; then opts+=("$word")
        else exe+=("$word"); fi
      done
      /usr/bin/time -f "%e %U %S %M" -o "$dir/time" "${exe[@]}" analyze "$TRACE" "${opts[@]}" --out "$dir/out" --force \
        >/dev/null 2>&1 || { echo "${programs[$j]} analyze failed" >&2; exit 1; }
    fi
    cat "$dir/time" >>"$dir/runs$j"
  done
done

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
mean() { awk '{ s += $1 } END { printf "%.2f", s / NR }'; }
# The mean beside the median: a build whose runs are bimodal (half of them slow, as with the heap in huge pages on a
# VM that hands free memory back: docs/performance.md#huge-pages-cold) can have the better median and the worse mean.
for j in $(seq 0 $((n - 1))); do
  f=$dir/runs$j
  name=${programs[$j]}
  [ "$name" = @perf-sched ] && name="perf sched timehist -s"
  printf '%s: wall %s s (mean %s), CPU %s s (mean %s), peak RSS %s MiB; runs: %s\n' "$name" \
    "$(awk '{ print $1 }' "$f" | median)" "$(awk '{ print $1 }' "$f" | mean)" \
    "$(awk '{ print $2 + $3 }' "$f" | median)" "$(awk '{ print $2 + $3 }' "$f" | mean)" \
    "$(awk '{ print int($4 / 1024) }' "$f" | median)" "$(awk '{ printf "%s ", $1 }' "$f")"
done
