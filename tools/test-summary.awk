# One plain closing line over all test assemblies, from `dotnet test`'s own lines
# ("Passed!  - Failed: 0, Passed: 8, Skipped: 1, ..."): awk -f tools/test-summary.awk LOG
# The count is copied before its comma is dropped: writing to $(i+1) past the last field makes a new field, and gawk
# (the awk a machine with mariadb-server has) then never reaches the end of the loop. tools/check.sh runs this on a
# fixture line under a timeout, so a change that hangs fails the rule checks rather than the CI job's last step.
/(Passed|Failed)! +- +Failed:/ {
  for (i = 1; i < NF; i++) {
    n = $(i + 1); gsub(",", "", n)
    if ($i == "Failed:") f += n
    if ($i == "Passed:") p += n
    if ($i == "Skipped:") s += n
  }
}
END { printf "tests: %d passed, %d failed, %d skipped\n", p, f, s }
