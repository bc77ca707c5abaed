#!/usr/bin/env bash
# Instructions a Native AOT tracelab executes for one read of a trace and one read + all analyses on one thread
# (`tracelab bench TRACE --repeat 1 --analysis-threads 0`), counted by callgrind: a figure this host's noise does not
# move (docs/performance.md#instruction-counts). With two executables, the functions whose counts changed most.
#
#   tools/count-instructions.sh EXE TRACE [TOP]
#   tools/count-instructions.sh EXE_BEFORE EXE_AFTER TRACE [TOP]
#
# EXE: a Native AOT tracelab published with -p:StripSymbols=false (its managed functions are named from its symbol
# table). Needs valgrind (apt-get install valgrind). About 30 s per run of the busy 150 MB perf.data.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [[ $# -lt 2 ]]; then sed -n '2,10p' "$0"; exit 2; fi
if ! command -v valgrind >/dev/null; then
    echo "count-instructions: valgrind is not installed (apt-get install valgrind)" >&2
    exit 2
fi

profile() { # EXE OUT: runs the bench under callgrind; prints the bench's event count line
    local exe=$1 out=$2
    # The collector reserves 256 GB of address space by default, more than valgrind can map: 1 GB is enough here.
    DOTNET_GCRegionRange=40000000 valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file="$out" \
        "$exe" bench "$trace" --repeat 1 --analysis-threads 0 >"$out.stdout" 2>"$out.stderr" || {
        echo "count-instructions: $exe failed under callgrind (see $out.stderr)" >&2; exit 1; }
    grep -m1 '^trace ' "$out.stdout" || true
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [[ $# -ge 3 && $(head -c 4 "$2" | od -An -c | tr -d ' ') == '177ELF' ]]; then
    before=$1 after=$2 trace=$3 top=${4:-30}
    profile "$before" "$tmp/before"
    profile "$after" "$tmp/after" >/dev/null
    python3 "$here/count-instructions.py" "$tmp/before" "$before" "$top" "$tmp/after" "$after"
else
    exe=$1 trace=$2 top=${3:-40}
    profile "$exe" "$tmp/one"
    python3 "$here/count-instructions.py" "$tmp/one" "$exe" "$top"
fi
