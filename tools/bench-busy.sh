#!/usr/bin/env bash
# Busy-system benchmark (issue 21, docs/performance.md "Busy systems"): records a system-wide scheduler trace with
# `perf record -a` while many short processes run (find | xargs -P4 md5sum for $SECONDS_BUSY s), then runs
# `perf sched timehist -s` and `tracelab analyze` alternately on the same file, $REPEAT times each, and prints the
# medians, the ratio, peak RSS, report file sizes and terminal line counts. Needs root and perf.
#   REPEAT=5 OUT=/tmp/tracelab-busy tools/bench-busy.sh            # TRACE=FILE to time an existing perf.data
set -euo pipefail
cd "$(dirname "$0")/.."
REPEAT=${REPEAT:-5}
OUT=${OUT:-/tmp/tracelab-busy}
SECONDS_BUSY=${SECONDS_BUSY:-10}
mkdir -p "$OUT"
[ -n "${NO_BUILD:-}" ] || dotnet build -c Release src/TraceLab.Cli -v q >/dev/null
T=${TRACELAB:-src/TraceLab.Cli/bin/Release/net8.0/tracelab.dll}  # TRACELAB=DLL times another build
TRACE=${TRACE:-$OUT/busy.perf.data}

if [ ! -f "$TRACE" ]; then
  echo "recording a busy system for $SECONDS_BUSY s (perf record -a, scheduler tracepoints) ..."
  events=sched:sched_switch,sched:sched_waking,sched:sched_wakeup_new,sched:sched_migrate_task
  events=$events,sched:sched_process_fork,sched:sched_process_exec,sched:sched_process_exit
  perf record -q -m 16M -a -e "$events" -o "$TRACE" -- sh -c "timeout $SECONDS_BUSY sh -c 'while true; do
    find /usr -xdev -type f 2>/dev/null | head -20000 | xargs -P4 -n20 md5sum >/dev/null 2>&1; done'" || true
fi

# Read the file just before each timed run: these VMs evict idle page cache (see tools/bench.sh).
warm() { cat "$TRACE" >/dev/null; }
# One timed run: wall s, peak RSS KiB, user s, sys s into $OUT/time.txt, stdout into $1.
timed() { local out=$1; shift; warm; /usr/bin/time -o "$OUT/time.txt" -f "%e %M %U %S" "$@" >"$out" 2>/dev/null; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

: >"$OUT/perf.times"; : >"$OUT/tracelab.times"
for _ in $(seq "$REPEAT"); do
  timed "$OUT/perf-sched.txt" perf sched -i "$TRACE" timehist -s; cat "$OUT/time.txt" >>"$OUT/perf.times"
  timed "$OUT/tracelab.txt" dotnet "$T" analyze "$TRACE" --out "$OUT/analyze-out" --force
  cat "$OUT/time.txt" >>"$OUT/tracelab.times"
done

echo "== machine: $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%F)"
echo "== trace: $TRACE, $(du -m "$TRACE" | cut -f1) MB, $(perf script -i "$TRACE" -F tid 2>/dev/null | sort -u | wc -l) threads"
ps=$(cut -d' ' -f1 "$OUT/perf.times" | median); ts=$(cut -d' ' -f1 "$OUT/tracelab.times" | median)
pm=$(cut -d' ' -f2 "$OUT/perf.times" | median); tm=$(cut -d' ' -f2 "$OUT/tracelab.times" | median)
# CPU time (user + sys): steadier than wall time when other work loads the machine.
cpu() { awk '{ print $3 + $4 }' "$1" | median; }
pc=$(cpu "$OUT/perf.times"); tc=$(cpu "$OUT/tracelab.times")
width() { sed 's/\x1b\[[0-9;]*m//g' "$1" | wc -L; }
printf "| measure (median of %d, alternated) | perf sched timehist -s | tracelab analyze |\n|---|---|---|\n" "$REPEAT"
printf "| wall time, end to end | %.2f s | %.2f s (ratio %.2f) |\n" "$ps" "$ts" "$(awk "BEGIN{print $ts / $ps}")"
printf "| CPU time (user + sys) | %.2f s | %.2f s (ratio %.2f) |\n" "$pc" "$tc" "$(awk "BEGIN{print $tc / $pc}")"
printf "| peak RSS | %d MiB | %d MiB |\n" $((${pm%.*} / 1024)) $((${tm%.*} / 1024))
printf "| terminal output | %d lines, %d KB, %d columns | %d lines, %d KB, %d columns |\n" \
  "$(wc -l <"$OUT/perf-sched.txt")" $(($(wc -c <"$OUT/perf-sched.txt") / 1024)) "$(width "$OUT/perf-sched.txt")" \
  "$(wc -l <"$OUT/tracelab.txt")" $(($(wc -c <"$OUT/tracelab.txt") / 1024)) "$(width "$OUT/tracelab.txt")"
printf "| report files | — | %s |\n" "$(cd "$OUT/analyze-out" && for f in report.html report.json report.md; do
  printf "%s %s KB, " "$f" $(($(wc -c <"$f") / 1024)); done | sed 's/, $//')"
