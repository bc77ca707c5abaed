#!/bin/sh
# Screenshots of report.html's charts (docs/images/report-charts-*.png), rendered by Debian's headless chromium.
# Usage: tools/viewers/screenshot-charts.sh [TRACE.dat] [OUT-DIR]
# The page is the real report.html with every section but the chosen charts hidden (a CSS rule added to a copy).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
trace=${1:-$root/sample-traces/timemutex-mutex/trace.dat}
out=${2:-$root/docs/images}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dotnet run --project "$root/src/TraceLab.Cli" -- analyze "$trace" --out "$work/report" >/dev/null
shot() { # NAME HEIGHT CHART-ID...
  name=$1 height=$2; shift 2
  keep=$(printf ':not(#%s)' "$@")
  sed "s|</style>|main > *$keep { display: none !important; }\n</style>|" "$work/report/report.html" \
    > "$work/$name.html"
  chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
    --disable-sync --no-first-run --user-data-dir="$work/profile" --hide-scrollbars \
    --window-size="980,$height" --screenshot="$out/$name.png" "file://$work/$name.html" 2>/dev/null
  echo "$out/$name.png"
}
shot report-charts-states-latency 1000 chart-thread-states chart-ready-latency
shot report-charts-handoffs-wakers 1100 chart-handoff-gaps chart-wakers
