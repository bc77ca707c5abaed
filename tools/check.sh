#!/usr/bin/env bash
# The written rules, checked (docs/testing.md#rule-checks): line length, formatting, Markdown links and anchors,
# no issue numbers or files outside the repository, no numbered headings or section-number citations, and the
# analysis and format lists in the docs equal to the code's. One line per violation; exit 1 if there is any.
#
#   tools/check.sh            fast: whitespace by `dotnet format whitespace --folder` (no build), imports by
#                             tools/check-rules.py, the docs-list test only when its assembly is already built
#   tools/check.sh --full     what CI runs: `dotnet format TraceLab.sln --verify-no-changes` (whitespace, imports
#                             and the .editorconfig style rules; loads the projects, about a minute on 2 CPUs) and
#                             the docs-list test, built if needed
set -uo pipefail
cd "$(dirname "$0")/.."

full=0
case "${1:-}" in
  "") ;;
  --full) full=1 ;;
  *) echo "usage: tools/check.sh [--full]" >&2; exit 2 ;;
esac

command -v python3 >/dev/null || { echo "tools/check.sh needs python3 (apt-get install -y python3)" >&2; exit 1; }
command -v dotnet >/dev/null || { echo "tools/check.sh needs the .NET SDK (see README.md)" >&2; exit 1; }

failed=0
run() { "$@" || failed=1; }

# Paths in dotnet format's lines relative to the repository, one line per violation.
root=$(pwd)
fmt_lines() { sed -e "s#${root}/##g" -e 's/ \[[^]]*\]$//' | grep -E '(error|warning) [A-Z0-9]+:' ; }

if [ "$full" = 1 ]; then
  python3 tools/check-rules.py lines links references headings || failed=1
  out=$(dotnet format TraceLab.sln --verify-no-changes -v q 2>&1); rc=$?
else
  python3 tools/check-rules.py || failed=1
  out=$(dotnet format whitespace . --folder --verify-no-changes -v q \
          --include src/ analyzers/ tests/ --exclude '**/bin/' '**/obj/' 2>&1); rc=$?
fi
if [ "$rc" != 0 ]; then
  lines=$(printf '%s\n' "$out" | fmt_lines)
  if [ -n "$lines" ]; then printf '%s\n' "$lines"
  else printf 'dotnet format: %s\n' "$(printf '%s' "$out" | tail -1)"; fi
  failed=1
fi

# The analysis names and the trace-format list in README.md and docs/ equal AnalysisReports.All and TraceFormats.All.
tests=tests/TraceLab.Tests
dll=$(ls "$tests"/bin/*/net*/TraceLab.Tests.dll 2>/dev/null | head -1)
if [ "$full" = 1 ] || [ -n "$dll" ]; then
  build=(); [ "$full" = 1 ] || build=(--no-build)
  log=$(dotnet test "$tests" "${build[@]}" -v q --nologo \
          --filter "FullyQualifiedName~TraceLab.Tests.Docs.DocListTests" 2>&1); rc=$?
  if [ "$rc" != 0 ]; then
    # One line per failed test (with -v q only the [FAIL] lines name them), and the assertion where shown.
    printf '%s\n' "$log" | grep -E '\[FAIL\]|^\s+(Assert|Expected|Actual|Error Message)' |
      sed -e 's/^\[xUnit[^]]*\] *//' -e 's/^ *//' -e 's/^/docs-lists: /'
    failed=1
  fi
else
  echo "(docs-lists: skipped, $tests is not built; tools/check.sh --full builds it)" >&2
fi

# The CI job's closing summary (tools/test-summary.awk) on dotnet test's own lines: the right sums, and no hang.
summary=$(printf '%s\n' \
  'Passed!  - Failed:     0, Passed:   663, Skipped:     3, Total:   666, Duration: 53 s - A.dll (net8.0)' \
  'Failed!  - Failed:     2, Passed:    96, Skipped:     2, Total:   100, Duration: 7 m 49 s - B.dll (net8.0)' |
  timeout 10 awk -f tools/test-summary.awk 2>&1)
[ "$summary" = "tests: 759 passed, 2 failed, 5 skipped" ] ||
  { echo "tools/test-summary.awk: expected 'tests: 759 passed, 2 failed, 5 skipped', got '$summary'"; failed=1; }

exit "$failed"
