using System.Globalization;

namespace TraceLab.Sweeps;

/// <summary>
/// Names of the per-run numbers a sweep plots and judges (docs/sweeps.md):
/// elapsed/user/system (seconds), vol/invol/switches (counts), a workload metric by its own name, or a traced
/// metric as "traced.NAME".
/// </summary>
public static class SweepMetrics
{
    public static readonly IReadOnlyList<string> BuiltIn = ["elapsed", "user", "system", "vol", "invol", "switches"];

    /// <summary>Elapsed ns ÷ Σ threads' iterations (the workload metric "iterations"); docs/sweeps.md.</summary>
    public const string ElapsedPerIteration = "elapsedPerIteration";

    /// <summary>The value of a metric in one run, or null when the run does not have it.</summary>
    public static double? Value(SweepRunRecord run, string metric)
    {
        switch (metric)
        {
            case "elapsed": return run.ElapsedNs / 1e9;
            case "user": return run.UserNs / 1e9;
            case "system": return run.SystemNs / 1e9;
            case "vol": return run.VoluntarySwitches;
            case "invol": return run.InvoluntarySwitches;
            case "switches": return run.VoluntarySwitches + run.InvoluntarySwitches;
            case ElapsedPerIteration:
                // Comparable across points run with different iteration counts (calibrated sweeps such as tm2).
                return run.Metrics.TryGetValue("iterations", out var n) && n > 0 ? run.ElapsedNs / n : null;
        }
        if (metric.StartsWith("traced.", StringComparison.Ordinal))
            return run.Traced.TryGetValue(metric["traced.".Length..], out var t) ? t : null;
        return run.Metrics.TryGetValue(metric, out var m) ? m : null;
    }

    /// <summary>Axis / table label with the unit.</summary>
    public static string Label(string metric) => metric switch
    {
        "elapsed" => "elapsed time (s)",
        "user" => "user time (s)",
        "system" => "system time (s)",
        "vol" => "voluntary context switches",
        "invol" => "involuntary context switches",
        "switches" => "context switches (voluntary + involuntary)",
        ElapsedPerIteration => "elapsed per iteration (ns)",
        _ when metric.StartsWith("traced.", StringComparison.Ordinal) =>
            TracedMetrics.Label(metric["traced.".Length..]) + " (trace)",
        _ => metric,
    };

    public static string Format(double v)
    {
        var a = Math.Abs(v);
        return a == 0 ? "0"
            : a >= 1000 ? v.ToString("#,0", CultureInfo.InvariantCulture)
            : a >= 100 ? v.ToString("0.#", CultureInfo.InvariantCulture)
            : a >= 1 ? v.ToString("0.###", CultureInfo.InvariantCulture)
            : v.ToString("0.####", CultureInfo.InvariantCulture) is var s && s != "0" ? s
            : v.ToString("0.###e+0", CultureInfo.InvariantCulture);
    }
}
