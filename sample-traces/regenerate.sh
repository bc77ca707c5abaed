#!/usr/bin/env bash
# Re-captures the sample traces (needs root and tracefs). The reports beside them are what TraceLab made from
# them; tests re-analyze each trace and compare with the stored report.
set -euo pipefail
cd "$(dirname "$0")/.."
dotnet build src/TraceLab.Cli -v q >/dev/null
run() { dotnet run --no-build --project src/TraceLab.Cli -- trace timemutex "$1" --iterations "$2" --out "sample-traces/timemutex-$1" --force >/dev/null; rm -f "sample-traces/timemutex-$1/workload.log"; }
run cs 200000
run mutex 3000
ls -la sample-traces/*/
