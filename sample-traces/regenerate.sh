#!/usr/bin/env bash
# Re-captures the sample traces (needs root and tracefs). The reports beside them are what TraceLab made from
# them; tests re-analyze each trace and compare with the stored report.
set -euo pipefail
cd "$(dirname "$0")/.."
dotnet build src/TraceLab.Cli -v q >/dev/null
run() { dotnet run --no-build --project src/TraceLab.Cli -- trace timemutex "$1" --iterations "$2" --out "sample-traces/timemutex-$1" --force >/dev/null; rm -f "sample-traces/timemutex-$1/workload.log"; }
run cs 200000
run mutex 3000
# The same workload recorded by perf (perf.data import; needs perf): the lock events a tracefs capture enables.
if command -v perf >/dev/null; then
  d=sample-traces/perf-timemutex-mutex; mkdir -p "$d"; rm -f "$d"/*
  events=sched:sched_switch,sched:sched_waking,sched:sched_wakeup,sched:sched_wakeup_new,sched:sched_migrate_task,sched:sched_process_fork,sched:sched_process_exit
  events=$events,syscalls:sys_enter_futex,syscalls:sys_exit_futex,syscalls:sys_enter_semop,syscalls:sys_exit_semop,syscalls:sys_enter_semtimedop,syscalls:sys_exit_semtimedop,syscalls:sys_enter_sched_yield,syscalls:sys_exit_sched_yield
  perf record -q -m 16M -a -e "$events" -o "$d/capture.perf.data" -- native-workloads/build/linux/bin/timemutex --result "$d/workload.json" --iterations 1500 --affinity 0 --priority 0 3 1 0 4 0 4 >/dev/null
  chmod 644 "$d/capture.perf.data"
  dotnet run --no-build --project src/TraceLab.Cli -- analyze "$d/capture.perf.data" >/dev/null
fi
ls -la sample-traces/*/
