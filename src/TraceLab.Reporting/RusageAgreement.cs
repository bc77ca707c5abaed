using System.Globalization;

namespace TraceLab.Reporting;

/// <summary>
/// The warning that the trace disagrees with the kernel's own accounting (docs/metrics.md#rusage-agreement): a
/// workload thread's traced run time against its getrusage(RUSAGE_THREAD) user + system, and a traced program's
/// (`trace -- PROGRAM`) against getrusage of its tree. Agreement within the tolerance is the normal case; outside
/// it, another tracer, lost switches or slow exits from idle make every run, ready and wait figure suspect.
/// </summary>
public static class RusageAgreement
{
    /// <summary>Relative tolerance: |traced − getrusage| may be up to this share of getrusage.</summary>
    public const double Tolerance = 0.20;

    /// <summary>Absolute floor (ns): smaller differences are tick-sized noise, whatever their share.</summary>
    public const long FloorNs = 10_000_000;

    /// <summary>Disagreeing threads named in the warning, the largest difference first.</summary>
    private const int Named = 4;

    /// <summary>Whether <paramref name="tracedNs"/> and <paramref name="rusageNs"/> differ beyond the
    /// tolerance.</summary>
    public static bool Disagree(long tracedNs, long rusageNs)
    {
        var difference = Math.Abs(tracedNs - rusageNs);
        return difference > FloorNs && difference > Tolerance * rusageNs;
    }

    /// <summary>The warnings for <paramref name="report"/>'s threads and program; empty when they agree.</summary>
    public static IReadOnlyList<string> Warnings(RunReport report)
    {
        var warnings = new List<string>();
        var measured = report.Threads.Where(t => t.Workload is not null).ToList();
        var off = measured
            .Select(t => (t.Tid, Traced: t.RunNs, Rusage: t.Workload!.UserNs + t.Workload.SystemNs))
            .Where(t => Disagree(t.Traced, t.Rusage))
            .OrderByDescending(t => Math.Abs(t.Traced - t.Rusage)).ThenBy(t => t.Tid)
            .ToList();
        if (off.Count > 0)
        {
            var figures = string.Join(", ", off.Take(Named).Select(t => $"tid {t.Tid} {Figures(t.Traced, t.Rusage)}"));
            var more = off.Count > Named ? ", …" : "";
            warnings.Add($"the traced run time of {off.Count} of {measured.Count} workload threads differs from " +
                $"their getrusage user + system by more than {Limits}: {figures}{more}; " +
                Cause(off.Sum(t => t.Traced) < off.Sum(t => t.Rusage)));
        }
        if (report.Run?.Rusage is { } tree && report.Process is { } process)
        {
            var rusage = tree.UserNs + tree.SystemNs;
            if (Disagree(process.TracedRunNs, rusage))
                warnings.Add($"the traced run time of the program's tree differs from its getrusage user + system " +
                    $"by more than {Limits}: {Figures(process.TracedRunNs, rusage)}; " +
                    Cause(process.TracedRunNs < rusage));
        }
        return warnings;
    }

    private static string Limits =>
        $"{(Tolerance * 100).ToString("0", CultureInfo.InvariantCulture)} % and " +
        $"{(FloorNs / 1e6).ToString("0", CultureInfo.InvariantCulture)} ms (docs/metrics.md#rusage-agreement)";

    private static string Figures(long traced, long rusage) =>
        $"traced {Units.Ms(traced)} ms vs getrusage {Units.Ms(rusage)} ms" + (rusage > 0
            ? $" ({((double)traced / rusage).ToString("0.00", CultureInfo.InvariantCulture)})"
            : "");

    private static string Cause(bool tracedBelow) => tracedBelow
        ? "likely cause: the kernel charged time the trace does not show as running: other tracing on the machine " +
          "(its probes on the scheduler events run on these threads; a capture lists it at its start), or slow " +
          "exits from idle (docs/design-notes.md#rusage-vs-trace)"
        : "likely cause: the trace shows running time the kernel did not charge: switches that were lost or never " +
          "logged, whose repair estimated the run's end, or a tid reused by another thread";
}
