#!/bin/sh
# Screenshot of KernelShark showing a trace.dat, under a private Xvfb display (apt-get install -y kernelshark xvfb
# imagemagick). KernelShark is run as user nobody: as root it opens a warning dialog first.
# Usage: tools/viewers/screenshot-kernelshark.sh [TRACE.dat] [OUT.png]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
trace=${1:-$root/sample-traces/timemutex-mutex/trace.dat}
out=${2:-$root/docs/images/kernelshark-trace-dat.png}
work=$(mktemp -d)
cp "$trace" "$work/trace.dat"
chown -R nobody:nogroup "$work" && chmod 700 "$work"
display=:$((90 + $$ % 100))
Xvfb "$display" -screen 0 1400x900x24 -ac >/dev/null 2>&1 & xvfb=$!
trap 'kill $ks $xvfb 2>/dev/null; rm -rf "$work"' EXIT
sleep 2
setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME="$work" XDG_RUNTIME_DIR="$work" DISPLAY="$display" \
  kernelshark -geometry 1400x900+0+0 "$work/trace.dat" >/dev/null 2>&1 & ks=$!
sleep 15
DISPLAY="$display" import -window root "$work/shot.png"
convert "$work/shot.png" -colors 128 "PNG8:$out"
echo "$out"
