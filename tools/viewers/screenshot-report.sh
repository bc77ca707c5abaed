#!/bin/sh
# Renders TraceLab's report.html of a trace to a PNG with Debian's headless chromium (apt-get install -y chromium).
# Usage: tools/viewers/screenshot-report.sh [TRACE.dat] [OUT.png] [WIDTHxHEIGHT] [TIMELINE-WINDOW]
# Default: the checked-in mutex sample → docs/images/report-html.png, 1400x980, window 10:1 (ms from region begin).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
trace=${1:-$root/sample-traces/timemutex-mutex/trace.dat}
out=${2:-$root/docs/images/report-html.png}
size=${3:-1400x980}
window=${4:-10:1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dotnet run --project "$root/src/TraceLab.Cli" -- analyze "$trace" --out "$work/report" \
  --timeline-window "$window" >/dev/null
chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
  --disable-sync --no-first-run --user-data-dir="$work/profile" --hide-scrollbars \
  --window-size="$(echo "$size" | tr x ,)" --screenshot="$out" "file://$work/report/report.html" 2>/dev/null
echo "$out"
