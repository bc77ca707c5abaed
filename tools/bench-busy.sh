#!/usr/bin/env bash
# Busy-system benchmark (docs/performance.md#busy-systems). Records a system-wide scheduler trace while a
# parallel C build (make -j4 of $FILES generated files, in a loop) and `sysbench threads` run for $SECONDS_BUSY s —
# as perf.data (`perf record -e 'sched:*' -a`) and, at the same time, as a trace.dat twin (`tracelab trace --system`:
# trace-cmd record cannot enable ftrace on every host) — then times `perf sched timehist -s` and `tracelab analyze`
# (all analyses, all report files, terminal output, process start) alternately on the same file, $REPEAT times each,
# and prints medians of wall and CPU time, the ratio, peak RSS, report file sizes and terminal line counts.
# Needs root, perf and cc.
#   REPEAT=5 OUT=/tmp/tracelab-busy tools/bench-busy.sh         # record (once; kept in $OUT) and time both files
#   TRACE=FILE tools/bench-busy.sh                              # time an existing perf.data or trace.dat
#   THREADS=100000 tools/bench-busy.sh                          # a synthetic trace.dat of 100,000 threads
#   TRACELAB="artifacts/linux-x64/tracelab" tools/bench-busy.sh # time another build (default: dotnet + Release dll)
#   TRACELAB=tracelab tools/bench-busy.sh                       # the installed tool (`dotnet tool install`, on PATH)
#   INSTALL=1 tools/bench-busy.sh                               # pack and install it first, as README "Install"
#                                                               # says, into $OUT/tool (linux-x64: Native AOT)
#   TRACELAB="dotnet run --project src/TraceLab.Cli --" tools/bench-busy.sh   # what `dotnet run` costs
# The header says what ran: the Native AOT executable or the JIT (dotnet, or a tool's shim that starts it).
set -euo pipefail
cd "$(dirname "$0")/.."
REPEAT=${REPEAT:-5}
OUT=${OUT:-/tmp/tracelab-busy}
SECONDS_BUSY=${SECONDS_BUSY:-10}
FILES=${FILES:-300}
mkdir -p "$OUT"

busy() {  # the load: a parallel build of generated C files in a loop, plus 16 sysbench threads
  local src=$OUT/cproj
  mkdir -p "$src"
  if [ ! -f "$src/Makefile" ]; then
    for i in $(seq "$FILES"); do
      printf '#include <stdio.h>\nint f%d(int x){int s=0;for(int i=0;i<x;i++)s+=i*%d;printf("%%d",s);return s;}\n' \
        "$i" "$i" >"$src/f$i.c"
    done
    printf 'OBJS=$(patsubst %%.c,%%.o,$(wildcard *.c))\nall: $(OBJS)\n%%.o: %%.c\n\t$(CC) -O1 -c $< -o $@\n' \
      >"$src/Makefile"
  fi
  if command -v sysbench >/dev/null; then
    sysbench threads --threads=16 --time="$SECONDS_BUSY" run >/dev/null 2>&1 &
  fi
  timeout "$SECONDS_BUSY" sh -c "while true; do make -s -C '$src' -B -j4 >/dev/null 2>&1; done" || true
  wait
}

# `perf record` runs this script again to make the load.
if [ "${1:-}" = busy-only ]; then busy; exit 0; fi
if [ -n "${INSTALL:-}" ]; then
  # The packages README "Install" makes (the one naming a package per platform, and this platform's), installed from
  # them alone (nuget.org may know another `tracelab`).
  rm -rf "$OUT/packages" "$OUT/tool"
  dotnet pack src/TraceLab.Cli -r linux-x64 -o "$OUT/packages" -v q >/dev/null
  dotnet pack src/TraceLab.Cli --no-build -o "$OUT/packages" -v q >/dev/null
  printf '<configuration><packageSources><clear /><add key="packed" value="%s" /></packageSources></configuration>\n' \
    "$OUT/packages" >"$OUT/nuget.config"
  dotnet tool install --tool-path "$OUT/tool" --configfile "$OUT/nuget.config" tracelab >/dev/null
  TRACELAB=$OUT/tool/tracelab
elif [ -z "${TRACELAB:-}" ]; then
  [ -n "${NO_BUILD:-}" ] || dotnet build -c Release src/TraceLab.Cli -v q >/dev/null
fi
TRACELAB=${TRACELAB:-dotnet src/TraceLab.Cli/bin/Release/net8.0/tracelab.dll}
read -r -a TL <<<"$TRACELAB"

# What runs: a Native AOT executable has its managed code in a section of its own; anything else starts the runtime.
kind() {
  local exe
  exe=$(command -v "${TL[0]}") || { echo "${TL[0]} not found"; return; }
  exe=$(readlink -f "$exe")
  # grep -c, not -q: -q stops reading at the first match, readelf dies of SIGPIPE and pipefail called it JIT.
  if [ "$(readelf -S "$exe" 2>/dev/null | grep -c __managedcode)" -gt 0 ]; then echo "Native AOT, $exe"
  else echo "JIT, $exe"; fi
}

traces=()
if [ -n "${TRACE:-}" ]; then
  traces=("$TRACE")
elif [ -n "${THREADS:-}" ]; then
  t=$OUT/threads-$THREADS.dat
  [ -f "$t" ] || "${TL[@]}" bench "$t" --generate-threads "$THREADS" --repeat 1 --analysis threads | sed -n 1p
  traces=("$t")
else
  p=$OUT/busy.perf.data d=$OUT/busy-tracefs/trace.dat
  if [ ! -f "$p" ] || [ ! -f "$d" ]; then
    echo "recording a busy system for $SECONDS_BUSY s (perf record -a and tracelab trace --system at once) ..."
    # Without sysbench the load is the build loop alone: a file a tenth the size (11 MB against 152 on a 2-vCPU VM).
    command -v sysbench >/dev/null ||
      echo "sysbench is not installed (apt-get install sysbench): the load is the C build loop alone" >&2
    rm -rf "$OUT/busy-tracefs" "$p"
    "${TL[@]}" trace --system --duration $((SECONDS_BUSY + 2)) --syscalls none --analysis threads \
      --out "$OUT/busy-tracefs" >"$OUT/tracefs-capture.log" 2>&1 &
    capture=$!
    sleep 1
    perf record -q -m 16M -a -e 'sched:*' -o "$p" -- "$0" busy-only || true
    wait "$capture" || echo "tracelab trace --system failed: see $OUT/tracefs-capture.log"
  fi
  traces=("$p")
  [ -f "$d" ] && traces+=("$d")
fi

# Read the file just before each timed run: these VMs evict idle page cache (see tools/bench.sh).
warm() { cat "$1" >/dev/null; }
# One timed run: wall s, peak RSS KiB, user s, sys s appended to $2, stdout into $1.
timed() {
  local out=$1 times=$2; shift 2
  /usr/bin/time -o "$OUT/time.txt" -f "%e %M %U %S" "$@" >"$out" 2>/dev/null || true
  cat "$OUT/time.txt" >>"$times"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
col() { cut -d' ' -f"$1" "$2" | median; }
cpu() { awk '{ print $3 + $4 }' "$1" | median; }
width() { sed 's/\x1b\[[0-9;]*m//g' "$1" | wc -L; }
terminal() { printf "%d lines, %d KB, %d columns" "$(wc -l <"$1")" $(($(wc -c <"$1") / 1024)) "$(width "$1")"; }

for trace in "${traces[@]}"; do
  perf_too=$([[ $trace == *.perf.data || $trace == *perf.data ]] && echo 1 || echo "")
  : >"$OUT/perf.times"; : >"$OUT/tracelab.times"
  for _ in $(seq "$REPEAT"); do
    if [ -n "$perf_too" ]; then
      warm "$trace"; timed "$OUT/perf-sched.txt" "$OUT/perf.times" perf sched -i "$trace" timehist -s
    fi
    warm "$trace"
    timed "$OUT/tracelab.txt" "$OUT/tracelab.times" "${TL[@]}" analyze "$trace" --out "$OUT/analyze-out" --force
  done
  events=$("${TL[@]}" bench "$trace" --repeat 1 --analysis threads 2>/dev/null |
    sed -n 's/.* MB, \([0-9,]*\) events.*/\1/p')
  echo
  echo "== machine: $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%F)"
  echo "== trace: $trace, $(du -m "$trace" | cut -f1) MB, $events events"
  echo "== tracelab = $TRACELAB ($(kind))"
  printf "| measure (median of %d, alternated) | perf sched timehist -s | tracelab analyze |\n|---|---|---|\n" "$REPEAT"
  ts=$(col 1 "$OUT/tracelab.times"); tc=$(cpu "$OUT/tracelab.times"); tm=$(col 2 "$OUT/tracelab.times")
  if [ -n "$perf_too" ]; then
    ps=$(col 1 "$OUT/perf.times"); pc=$(cpu "$OUT/perf.times"); pm=$(col 2 "$OUT/perf.times")
    printf "| wall time, end to end | %.2f s | %.2f s (ratio %.2f) |\n" "$ps" "$ts" "$(awk "BEGIN{print $ts / $ps}")"
    printf "| CPU time (user + sys) | %.2f s | %.2f s (ratio %.2f) |\n" "$pc" "$tc" "$(awk "BEGIN{print $tc / $pc}")"
    printf "| peak RSS | %d MiB | %d MiB |\n" $((${pm%.*} / 1024)) $((${tm%.*} / 1024))
    printf "| terminal output | %s | %s |\n" "$(terminal "$OUT/perf-sched.txt")" "$(terminal "$OUT/tracelab.txt")"
  else
    printf "| wall time, end to end | — (perf sched reads perf.data only) | %.2f s |\n" "$ts"
    printf "| CPU time (user + sys) | — | %.2f s |\n| peak RSS | — | %d MiB |\n" "$tc" $((${tm%.*} / 1024))
    printf "| terminal output | — | %s |\n" "$(terminal "$OUT/tracelab.txt")"
  fi
  printf "| report files | — | %s |\n" "$(cd "$OUT/analyze-out" && for f in report.html report.json report.md; do
    printf "%s %s KB, " "$f" $(($(wc -c <"$f") / 1024)); done | sed 's/, $//')"
done
