using System.Globalization;

namespace TraceLab.Sweeps.Verdicts;

/// <summary>
/// Shared behaviour of every rule: no verdict from fewer than three repeats, and, when the sweep was traced, the
/// medians of the trace metrics that explain the result at the points the rule compared.
/// </summary>
public abstract class VerdictRule(string claim, string aspect, string metric) : IVerdictRule
{
    public const int MinimumRepeats = 3;

    public string Claim { get; } = claim;
    public string Aspect { get; } = aspect;
    public string Metric { get; } = metric;
    public abstract string Criterion { get; }
    /// <summary>Traced metrics (names without "traced.") cited as explanation when present.</summary>
    public IReadOnlyList<string> Cite { get; init; } = [];

    public Verdict Judge(SweepData data)
    {
        var involved = Involved(data).Distinct().ToList();
        if (involved.Count == 0)
            return Make(VerdictOutcome.NotTested, [$"the sweep has none of the points this rule compares"]);
        // Without any successful run the problem is the missing repeats, not the metric.
        if (!data.HasMetric(Metric) && data.Runs.Any(r => r.Ok))
            return Make(VerdictOutcome.NotTested, [$"no run has the metric {Metric}"
                + (Metric.StartsWith("traced.", StringComparison.Ordinal) ? " (run the sweep with --trace)" : "")]);
        var repeats = data.MinOkRepeats(involved);
        if (repeats < MinimumRepeats)
            return Make(VerdictOutcome.InsufficientRepeats,
                [$"{repeats} successful repeat(s) at the weakest point; a verdict needs at least {MinimumRepeats} (use "
                    + $"--repeat {MinimumRepeats} or more)"]);
        var (outcome, evidence) = Decide(data);
        var all = evidence.ToList();
        foreach (var name in Cite)
        {
            var metric = "traced." + name;
            if (!data.HasMetric(metric)) continue;
            var parts = involved.Select(p => (p, s: data.Stat(p, metric))).Where(x => x.s is not null)
                .Select(x => $"{Describe(x.p)} {SweepMetrics.Format(x.s!.Median)}");
            all.Add($"trace, {TracedMetrics.Label(name)} (medians): {string.Join("; ", parts)}");
        }
        return Make(outcome, all);
    }

    /// <summary>The points the rule compares (for the repeat check and the trace citations).</summary>
    protected abstract IEnumerable<SweepPoint> Involved(SweepData data);

    protected abstract (VerdictOutcome, IEnumerable<string>) Decide(SweepData data);

    private Verdict Make(VerdictOutcome o, IReadOnlyList<string> evidence) =>
        new(Claim, Aspect, o, Criterion, evidence);

    protected static string Describe(SweepPoint p) =>
        p.Series == SweepSeries.Single.Label ? p.X : $"{p.Series} @ {p.X}";

    protected static string Range(Summary s) =>
        $"{SweepMetrics.Format(s.Median)} [{SweepMetrics.Format(s.Min)}–{SweepMetrics.Format(s.Max)}]";

    protected static double Num(string x) => double.Parse(x, CultureInfo.InvariantCulture);

    protected static bool IsNum(string x) =>
        double.TryParse(x, NumberStyles.Float, CultureInfo.InvariantCulture, out _);

    /// <summary>"{cpus}" and "{2cpus}" in rule values stand for this machine's CPU count M and 2M.</summary>
    protected static string Resolve(string value, SweepData data) => value switch
    {
        "{cpus}" => data.Cpus.ToString(CultureInfo.InvariantCulture),
        "{2cpus}" => (2 * data.Cpus).ToString(CultureInfo.InvariantCulture),
        _ => value,
    };

    /// <summary>
    /// <see cref="Resolve(string, SweepData)"/>, then the parameter's canonical form (names → numbers).
    /// </summary>
    protected static string Resolve(string param, string value, SweepData data) =>
        data.Canonical(param, Resolve(value, data));
}
