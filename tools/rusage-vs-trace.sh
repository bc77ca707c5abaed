#!/usr/bin/env bash
# Why getrusage reports more CPU time per thread than the trace's run time (docs/design-notes.md#rusage-vs-trace): runs
# `timemutex mutex` in a scratch tracefs instance with sched_stat_runtime — the kernel's own run-time accounting,
# one event per update_curr() — next to the scheduler events TraceLab reads, and prints per worker thread:
#   rusage   getrusage(RUSAGE_THREAD) user + system, from the workload's result
#   kernel   Σ sched_stat_runtime (what getrusage sums)
#   trace    run time from the switches alone (a CPU's idle→task switch that was not logged starts the task at the
#            CPU's last idle event, as TraceLab's chain repair does)
#   idleGap  Σ over switch-ins from the idle task of (switch − the sched_wakeup the idle CPU logged)
#   charged  Σ over those switch-ins of the kernel's charge before the switch (first sched_stat_runtime after it,
#            minus the time since the switch)
# Needs root, tracefs, python3 and the built workloads (any `tracelab` command builds them). Usage:
#   ITER=20000 tools/rusage-vs-trace.sh
set -euo pipefail
T=${TRACEFS:-/sys/kernel/tracing}
W=${WORKLOAD:-$(dirname "$0")/../native-workloads/build/linux/bin/timemutex}
ITER=${ITER:-20000}
OUT=$(mktemp -d)
I=$T/instances/tracelab-rusage-vs-trace
trap 'rm -rf "$OUT"' EXIT
# An instance of that name belongs to another run of this script (or one that was killed): left alone.
mkdir "$I" || { echo "$I exists: another run is using it (rmdir it if none is)" >&2; exit 1; }
trap 'echo 0 > "$I/tracing_on"; echo 0 > "$I/events/enable"; rmdir "$I"; rm -rf "$OUT"' EXIT
echo mono > "$I/trace_clock"
echo 131072 > "$I/buffer_size_kb"
for e in sched/sched_switch sched/sched_waking sched/sched_wakeup sched/sched_stat_runtime; do
  echo 1 > "$I/events/$e/enable"
done
echo 1 > "$I/tracing_on"
# The mutex scenario (`tracelab scenarios`): which=3 depth=1 delay=0 threads=4 sleep-points=0 active=4.
"$W" --result "$OUT/w.json" --iterations "$ITER" --affinity all --priority 0 3 1 0 4 0 4 >/dev/null
echo 0 > "$I/tracing_on"
cat "$I/trace" > "$OUT/trace.txt"
grep -h "dropped events\|overrun" "$I"/per_cpu/cpu*/stats |
  awk '{s += $NF} END {if (s > 0) print "warning: " s " events lost or overwritten"}'
python3 - "$OUT/w.json" "$OUT/trace.txt" <<'EOF'
import collections, json, re, sys
w = json.load(open(sys.argv[1]))
rusage = {t["tid"]: t["userNs"] + t["systemNs"] for t in w["threads"]}
line_re = re.compile(r"^\s*.*?-(\d+)\s+\[(\d+)\]\s+\S+\s+(\d+)\.(\d+):\s+(\w+):\s*(.*)$")
kernel, trace, gap, charged = (collections.Counter() for _ in range(4))
cpu_last, woken, pending = {}, {}, {}
for line in open(sys.argv[2]):
    m = line_re.match(line)
    if not m:
        continue
    pid, cpu, ev, rest = int(m[1]), int(m[2]), m[5], m[6]
    t = int(m[3]) * 10**9 + int(m[4].ljust(9, "0"))
    if cpu in cpu_last:
        since, current = cpu_last[cpu]
        # A task's event on a CPU believed idle: its idle->task switch was not logged.
        trace[pid if current == 0 and pid != 0 else current] += t - since
    current = pid
    if ev == "sched_wakeup":
        woken[int(re.search(r" pid=(\d+)", rest)[1])] = t
    elif ev == "sched_switch":
        prev = int(re.search(r"prev_pid=(\d+)", rest)[1])
        current = int(re.search(r"next_pid=(\d+)", rest)[1])
        if prev == 0 and current in woken:
            gap[current] += t - woken[current]
            pending[current] = t
    elif ev == "sched_stat_runtime":
        m2 = re.search(r" pid=(\d+) runtime=(\d+)", rest)
        tid, ns = int(m2[1]), int(m2[2])
        kernel[tid] += ns
        if tid in pending:
            charged[tid] += ns - (t - pending.pop(tid))
    cpu_last[cpu] = (t, current)
ms = lambda ns: f"{ns / 1e6:9.1f}"
print(f"{'tid':>8} {'rusage':>9} {'kernel':>9} {'trace':>9} {'idleGap':>9} {'charged':>9}"
      "  trace/rusage  (trace+idleGap)/rusage   (ms)")
for tid, ru in rusage.items():
    print(f"{tid:>8} {ms(ru)} {ms(kernel[tid])} {ms(trace[tid])} {ms(gap[tid])} {ms(charged[tid])}  "
          f"{trace[tid] / ru:12.3f}  {(trace[tid] + gap[tid]) / ru:21.3f}")
tot = lambda c: sum(c[t] for t in rusage)
ru = sum(rusage.values())
print(f"{'all':>8} {ms(ru)} {ms(tot(kernel))} {ms(tot(trace))} {ms(tot(gap))} {ms(tot(charged))}  "
      f"{tot(trace) / ru:12.3f}  {(tot(trace) + tot(gap)) / ru:21.3f}")
EOF
