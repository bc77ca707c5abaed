#!/usr/bin/env bash
# Do two builds write the same reports? (docs/performance.md#identity-check) Runs `analyze` of each trace with build A
# and build B, with the default analysis threads, with 0 and with 1, and compares report.md, report.json,
# report.html and the terminal output byte for byte (less the terminal's "Files" line, which names the output
# folder). Prints one line per difference and the number of runs; exits 1 when any run differs. A speed change is
# kept only when every run is the same.
#   tools/identity-check.sh A B [TRACE...]       # A, B: an executable (a published tracelab) or a quoted command;
#                                                # TRACE: default every trace under sample-traces/
#   tools/identity-check.sh /tmp/a/tracelab /tmp/b/tracelab busy.perf.data busy-tracefs/trace.dat
#   ARGS="--timeline-window 10:50" tools/identity-check.sh A B   # extra analyze options for every run
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: tools/identity-check.sh A B [TRACE...]" >&2; exit 2; }
cd "$(dirname "$0")/.."
A=$1 B=$2
shift 2
traces=("$@")
if [ ${#traces[@]} -eq 0 ]; then
  mapfile -t traces < <(find sample-traces -type f \( -name '*.dat' -o -name '*.data' -o -name '*.etl' \
    -o -name '*.etl.zip' \) | sort)
fi
for t in "${traces[@]}"; do [ -f "$t" ] || { echo "$t: no such file" >&2; exit 2; }; done
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

run() {  # build side trace threads-option: the reports in $dir/side, the terminal output in $dir/side.txt
  local build=$1 side=$2 trace=$3 threads=$4
  rm -rf "${dir:?}/$side"
  # shellcheck disable=SC2086
  ${build} analyze "$trace" --out "$dir/$side" --force $threads ${ARGS:-} >"$dir/$side.raw" 2>&1 \
    || echo "(exit $?)" >>"$dir/$side.raw"
  grep -v '^Files ' "$dir/$side.raw" >"$dir/$side.txt" || true
}

runs=0 differing=0
for t in "${traces[@]}"; do
  for threads in "" "--analysis-threads 0" "--analysis-threads 1"; do
    run "$A" a "$t" "$threads"
    run "$B" b "$t" "$threads"
    runs=$((runs + 1))
    same=1
    for f in report.md report.json report.html; do
      [ -f "$dir/a/$f" ] || [ -f "$dir/b/$f" ] || continue
      cmp -s "$dir/a/$f" "$dir/b/$f" || { same=0; echo "differ: $t ${threads:-(default threads)}: $f"; }
    done
    cmp -s "$dir/a.txt" "$dir/b.txt" || { same=0; echo "differ: $t ${threads:-(default threads)}: terminal output"; }
    [ $same = 1 ] || differing=$((differing + 1))
  done
done
echo "$runs runs (${#traces[@]} traces x analysis threads default, 0, 1): $differing differ"
[ "$differing" = 0 ]
