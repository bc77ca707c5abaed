#!/usr/bin/env bash
# Process-level fuzz (docs/testing.md#process-fuzz): runs the real tracelab executable, as a user does, on damaged
# copies of real traces of every format it reads and on the error paths around them, and counts how each run ended.
# Only exit codes 0, 1 and 2 are allowed: a signal (exit > 128), a hang (killed after $TIMEOUT s) or a stack trace
# on stderr is a failure, and its input is kept in $OUT/failures. The in-process fuzz tests cannot see what happens
# when the process itself ends (a native library still running then, an unhandled exception on another thread).
#
#   tools/fuzz-process.sh [SEED...]          seeds: trace.dat (v6, v7), perf.data, .etl, .etl.zip files;
#                                            default: the traces under sample-traces/
#   CASES=200     damaged files per seed (truncations, bit flips, zeroed ranges, random bytes, all cycled)
#   TRACELAB="dotnet src/TraceLab.Cli/bin/Debug/net8.0/tracelab.dll"   the build under test (default: this one;
#                 artifacts/linux-x64-aot/tracelab for the Native AOT build)
#   JOBS=2 TIMEOUT=120 SEED_RNG=1 OUT=/tmp/tracelab-fuzz-process
# Exit status: 0 when every run ended in 0, 1 or 2; 1 otherwise. The last line gives the counts.
set -euo pipefail
cd "$(dirname "$0")/.."
CASES=${CASES:-200}
JOBS=${JOBS:-2}
TIMEOUT=${TIMEOUT:-120}
SEED_RNG=${SEED_RNG:-1}
OUT=${OUT:-/tmp/tracelab-fuzz-process}
TRACELAB=${TRACELAB:-dotnet src/TraceLab.Cli/bin/Debug/net8.0/tracelab.dll}
if [ $# -eq 0 ]; then
  set -- sample-traces/*/trace.dat sample-traces/*/*.perf.data
fi
for seed in "$@"; do
  [ -f "$seed" ] || { echo "fuzz-process: $seed: no such file" >&2; exit 2; }
done
read -r -a exe <<<"$TRACELAB"
rm -rf "$OUT"
mkdir -p "$OUT/cases" "$OUT/runs" "$OUT/failures"

# Damaged files: each seed's name is kept at the end (the formats are recognised by content, .etl.zip by name too).
python3 - "$OUT/cases" "$CASES" "$SEED_RNG" "$@" <<'PY'
import os, random, sys
out, cases, rng = sys.argv[1], int(sys.argv[2]), random.Random(int(sys.argv[3]))
for s, seed in enumerate(sys.argv[4:]):
    data = open(seed, 'rb').read()
    base = os.path.basename(seed)
    for i in range(cases):
        kind = i % 5
        b = bytearray(data)
        if kind == 0:    # truncated anywhere (the header, a page, the last byte)
            b = b[:rng.randrange(len(b))]
        elif kind == 1:  # bit flips, most of them near the start, where the headers are
            for _ in range(rng.randint(1, 16)):
                limit = len(b) if rng.random() < 0.5 else min(len(b), 8192)
                b[rng.randrange(limit)] ^= 1 << rng.randrange(8)
        elif kind == 2:  # a zeroed range
            at = rng.randrange(len(b)); n = rng.randint(1, 65536)
            b[at:at + n] = bytes(len(b[at:at + n]))
        elif kind == 3:  # random bytes over a range
            at = rng.randrange(len(b)); n = rng.randint(1, 4096)
            b[at:at + n] = os.urandom(len(b[at:at + n]))
        else:            # the format's first bytes, then random bytes
            keep = rng.randint(1, 64)
            b = b[:keep] + os.urandom(rng.randint(0, 65536))
        # Named case first: the runs go through every seed's first cases before any seed's later ones.
        open(os.path.join(out, f"{i:05d}-s{s:02d}-k{kind}-{base}"), 'wb').write(b)
PY

# The error paths around the files: missing, empty, a directory, wrong format, unreadable, a full disk for --out.
special="$OUT/special"
mkdir -p "$special/dir" "$OUT/special"
: >"$special/empty.dat"
printf 'not a trace\n' >"$special/text.dat"
head -c 100000 /dev/urandom >"$special/random.dat"
cp "$1" "$special/unreadable-$(basename "$1")"
chmod 000 "$special/unreadable-$(basename "$1")"
full=""
cleanup() {
  if [ -n "$full" ]; then
    umount "$full" 2>/dev/null || umount -l "$full" 2>/dev/null || true
    rmdir "$full" 2>/dev/null || true
    full=""
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# Each error path: its arguments, NUL-separated, in a file of its own (NAME.args), run in name order.
n_special=0
error_path() {
  local name=$1; shift
  n_special=$((n_special + 1))
  printf '%s\0' "$@" >"$OUT/special/$(printf '%02d' "$n_special")-$name.args"
}

error_path missing analyze "$special/missing.dat" --out "$OUT/runs/missing"
for f in empty.dat text.dat random.dat dir; do
  error_path "$f" analyze "$special/$f" --out "$OUT/runs/$f" --force
done
error_path out-is-a-file analyze "$1" --out "$special/empty.dat" --force
error_path bad-option analyze "$1" --out "$OUT/runs/bad-option" --analysis nonsense
error_path export-text export "$special/text.dat" --to perfetto -o "$OUT/runs/text.perfetto"
if [ "$(id -u)" = 0 ]; then
  # As root: the unreadable file read by another user, and --out on a 64 KiB tmpfs (a full disk).
  if id nobody >/dev/null 2>&1; then
    error_path unreadable-as-nobody runuser -u nobody -- "${exe[@]}" analyze "$special/unreadable-$(basename "$1")" \
      --out /tmp/tracelab-fuzz-nobody --force
  fi
  full=$(mktemp -d /tmp/tracelab-fuzz-full.XXXXXX)
  if mount -t tmpfs -o size=64k tmpfs "$full"; then
    error_path full-disk analyze "$1" --out "$full/out" --force
  else
    rmdir "$full"; full=""
  fi
fi

# One run: exit code, and whether stderr holds a stack trace; written as one line of $OUT/results.
run_one() {
  local name=$1; shift
  local err="$OUT/runs/$name.err" code
  set +e
  timeout -k 5 "$TIMEOUT" "$@" >/dev/null 2>"$err"
  code=$?
  set -e
  local trace=0
  if grep -Eq '^ +at |Unhandled exception|   --- End of' "$err"; then trace=1; fi
  echo "$code $trace $name"
  if [ "$code" -gt 2 ] || [ "$trace" = 1 ]; then
    printf '%s\n' "$*" >"$OUT/failures/$name.cmd"
    cp "$err" "$OUT/failures/$name.err"
  fi
}
export -f run_one
export OUT TIMEOUT

{
  for argfile in "$OUT"/special/*.args; do
    name=$(basename "$argfile" .args)
    mapfile -d '' -t args <"$argfile"
    if [ "${args[0]}" = runuser ]; then
      run_one "special-$name" "${args[@]}"
    else
      run_one "special-$name" "${exe[@]}" "${args[@]}"
    fi
  done
  chmod 644 "$special/unreadable-$(basename "$1")"
  cleanup
  full=""
  find "$OUT/cases" -type f -printf '%f\n' | sort |
    xargs -P "$JOBS" -I{} bash -c 'run_one "$1" '"${exe[*]}"' analyze "$OUT/cases/$1" --out "$OUT/runs/$1.d" \
      --force; rm -rf "$OUT/runs/$1.d"' _ {}
} | tee "$OUT/results" |
  awk '{ if ($1 > 2 || $2 == 1) print "FAIL exit " $1 (($2 == 1) ? " (stack trace)" : "") ": " $3 }'

total=$(wc -l <"$OUT/results")
summary=$(awk '{ c[$1]++ } END { for (k in c) printf "exit %s: %d; ", k, c[k] }' "$OUT/results")
traces=$(awk '$2 == 1' "$OUT/results" | wc -l)
bad=$(awk '$1 > 2 || $2 == 1' "$OUT/results" | wc -l)
echo "fuzz-process: $total runs of ${exe[*]}: ${summary}stack traces: $traces; failures: $bad (inputs in $OUT/failures)"
[ "$bad" = 0 ]
