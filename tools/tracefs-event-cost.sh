#!/usr/bin/env bash
# Cost of tracefs events alone (no TraceLab process): runs `timemutex mutex` untraced and traced with several event
# sets in a scratch tracefs instance, round by round, and prints the workload's elapsed ms per variant.
# Needs root, tracefs and the built workloads (any `tracelab` command builds them). Usage:
#   ROUNDS=5 ARGS="3 1 0 4 --iterations 100000" tools/tracefs-event-cost.sh
set -euo pipefail
T=${TRACEFS:-/sys/kernel/tracing}
W=${WORKLOAD:-$(dirname "$0")/../native-workloads/build/linux/bin/timemutex}
ARGS=${ARGS:-3 1 0 4 --iterations 100000}
I=$T/instances/tracelab-event-cost
elapsed_ms() {
  $W $ARGS 2>/dev/null | tail -1 | grep -o '"elapsedNs":[0-9]*' | cut -d: -f2 | awk '{printf "%.0f", $1/1e6}'
}
READERS=()
start() { # $1: events; $2: 1 = copy trace_pipe_raw like the capture does
  mkdir "$I"; echo 65536 > "$I/buffer_size_kb"
  for e in $1; do echo 1 > "$I/events/$e/enable"; done
  echo 1 > "$I/tracing_on"; READERS=()
  if [ "$2" = 1 ]; then
    for c in "$I"/per_cpu/cpu*; do
      dd if="$c/trace_pipe_raw" of=/dev/null bs=4096 iflag=nonblock status=none 2>/dev/null & READERS+=($!)
    done
  fi
}
stop() {
  echo 0 > "$I/tracing_on"
  for p in "${READERS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  echo 0 > "$I/events/enable"; rmdir "$I"
}
trap '[ -d "$I" ] && stop' EXIT
SCHED_NO_WAKEUP="sched/sched_switch sched/sched_waking sched/sched_wakeup_new sched/sched_migrate_task"
SCHED_NO_WAKEUP="$SCHED_NO_WAKEUP sched/sched_process_fork sched/sched_process_exec sched/sched_process_exit"
SCHED="$SCHED_NO_WAKEUP sched/sched_wakeup"
ENTER="syscalls/sys_enter_futex syscalls/sys_enter_semop syscalls/sys_enter_semtimedop syscalls/sys_enter_sched_yield"
EXIT="syscalls/sys_exit_futex syscalls/sys_exit_semop syscalls/sys_exit_semtimedop syscalls/sys_exit_sched_yield"
declare -A SETS=([switch]="sched/sched_switch" [sched-no-wakeup]="$SCHED_NO_WAKEUP" [sched]="$SCHED"
                 [lock-enter]="$SCHED_NO_WAKEUP $ENTER" [lock]="$SCHED $ENTER $EXIT")
ORDER="switch sched-no-wakeup sched sched-no-reader lock-enter lock"
echo "round untraced $ORDER (elapsed ms)"
for r in $(seq 1 "${ROUNDS:-5}"); do
  line="$r $(elapsed_ms)"
  for v in $ORDER; do
    if [ "$v" = sched-no-reader ]; then start "$SCHED" 0; else start "${SETS[$v]}" 1; fi
    line="$line $(elapsed_ms)"; stop
  done
  echo "$line"
done
