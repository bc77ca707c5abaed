using TraceLab.Sweeps.Verdicts;

namespace TraceLab.Sweeps.Output;

/// <summary>Everything a sweep's sweep.json and report.md show, computed once from the runs.</summary>
public sealed class SweepSummary
{
    public required string Sweep { get; init; }
    public required string Workload { get; init; }
    public required string Title { get; init; }
    public List<string> Claims { get; init; } = [];
    public required DefinitionSummary Definition { get; init; }
    public required SettingsSummary Settings { get; init; }
    public required MachineInfo Machine { get; init; }
    public DateTimeOffset StartedUtc { get; init; }
    public DateTimeOffset FinishedUtc { get; init; }
    public bool Complete { get; init; }
    public int RunsPlanned { get; init; }
    public int RunsOk { get; init; }
    public int RunsFailed { get; init; }
    public List<PointSummary> Points { get; init; } = [];
    public List<VerdictSummary> Verdicts { get; init; } = [];
    /// <summary>Each claim's overall outcome from its aspects (every aspect reproduced → reproduced).</summary>
    public Dictionary<string, string> ClaimOutcomes { get; init; } = [];
    public List<string> Plots { get; init; } = [];
    public List<string> Failures { get; init; } = [];
    /// <summary>
    /// Cautions about the data itself (e.g. runs too short to time reliably), shown above the verdicts.
    /// </summary>
    public List<string> Warnings { get; init; } = [];

    /// <summary>
    /// Below this median elapsed a run's timing is of the order of a shared machine's scheduling noise.
    /// </summary>
    public const double ShortRunSeconds = 0.1;

    public static SweepSummary Build(SweepData data, SweepState state, MachineInfo machine, IReadOnlyList<string> plots)
    {
        var d = data.Definition;
        var metrics = SweepMetrics.BuiltIn
            .Concat(data.Runs.SelectMany(r => r.Metrics.Keys).Distinct().Order(StringComparer.Ordinal))
            .Concat(data.Runs.SelectMany(r => r.Traced.Keys).Distinct().Order(StringComparer.Ordinal)
                .Select(k => "traced." + k))
            .ToList();
        var verdicts = d.Verdicts.Select(v => v.Judge(data.ForVerdicts())).ToList();
        return new SweepSummary
        {
            Sweep = d.Name,
            Workload = d.Workload,
            Title = d.Title,
            Claims = [.. d.Claims],
            Definition = new DefinitionSummary(d.XParameter, [.. d.XValues], d.XLabel, d.LogX,
                d.Series.Select(s => new SeriesSummary(s.Label, s.Values.ToDictionary())).ToList(),
                d.Base.ToDictionary(), [.. d.PlotMetrics]),
            Settings = new SettingsSummary(state.Repeats, state.Traced, state.OrderSeed, state.Overrides),
            Machine = machine,
            StartedUtc = state.StartedUtc,
            FinishedUtc = state.Runs.Count > 0 ? state.Runs.Max(r => r.StartedUtc) : state.StartedUtc,
            Complete = state.Complete,
            RunsPlanned = state.Order.Count,
            RunsOk = data.Runs.Count(r => r.Ok),
            RunsFailed = data.Runs.Count(r => !r.Ok),
            Points = data.Points.Select(p => new PointSummary
            {
                Id = p.Id,
                Series = p.Series,
                X = p.X,
                Parameters = p.Values.ToDictionary(),
                Ok = data.Runs.Count(r => r.Point == p.Index && r.Ok),
                Failed = data.Runs.Count(r => r.Point == p.Index && !r.Ok),
                Stats = metrics.Select(m => (m, s: data.Stat(p, m))).Where(t => t.s is not null)
                    .ToDictionary(t => t.m, t => t.s!),
            }).ToList(),
            Verdicts = verdicts.Select(
                v => new VerdictSummary(v.Claim, v.Aspect, v.OutcomeText, v.Criterion, [.. v.Evidence])).ToList(),
            ClaimOutcomes =
                verdicts.GroupBy(v => v.Claim).ToDictionary(g => g.Key, g => Verdict.Text(Verdict.Combine(g))),
            Plots = [.. plots],
            Failures = data.Runs.Where(r => !r.Ok)
                .Select(
                    r => $"{data.Points[r.Point].Id} ({Describe(data.Points[r.Point])}) repeat {r.Repeat}: {r.Error}")
                    .ToList(),
            Warnings = new[] { ShortRunWarning(data), Calibration.ShortPointReruns.Warning(state, data.Points) }
                .OfType<string>().ToList(),
        };
    }

    /// <summary>
    /// Points whose median elapsed is under <see cref="ShortRunSeconds"/>: preemption of one lock holder or one timer
    /// tick moves such runs by tens of percent, so elapsed-based verdicts on them often end undecided.
    /// </summary>
    public static string? ShortRunWarning(SweepData data)
    {
        var medians = data.Points.Select(p => (p, s: data.Stat(p, "elapsed"))).Where(t => t.s is not null).ToList();
        var shortOnes = medians.Where(t => t.s!.Median < ShortRunSeconds).OrderBy(t => t.s!.Median).ToList();
        if (shortOnes.Count == 0) return null;
        var (p, st) = shortOnes[0];
        return FormattableString.Invariant(
                $"short runs: {shortOnes.Count} of {medians.Count} points have a median elapsed under ")
            + FormattableString.Invariant(
                $"{ShortRunSeconds * 1000:0} ms (shortest {st!.Median * 1000:0.#} ms at {p.Id}, {Describe(p)})")
            + "; timing noise is of that order, so elapsed verdicts on them may be undecided — make the runs longer "
            + "(e.g. --iterations) to judge them";
    }

    private static string Describe(SweepPoint p) => p.Series == SweepSeries.Single.Label ? p.X : $"{p.Series} @ {p.X}";
}

public sealed record DefinitionSummary(string XParameter, List<string> XValues, string? XLabel, bool LogX,
    List<SeriesSummary> Series, Dictionary<string, string> Base, List<string> PlotMetrics);

public sealed record SeriesSummary(string Label, Dictionary<string, string> Values);

public sealed record SettingsSummary(int Repeats, bool Traced, int OrderSeed, Dictionary<string, string> Overrides);

public sealed record VerdictSummary(
    string Claim, string Aspect, string Outcome, string Criterion, List<string> Evidence);

public sealed class PointSummary
{
    public required string Id { get; init; }
    public required string Series { get; init; }
    public required string X { get; init; }
    public Dictionary<string, string> Parameters { get; init; } = [];
    public int Ok { get; init; }
    public int Failed { get; init; }
    /// <summary>Per metric: n, min, median, max over the successful repeats (seconds for times).</summary>
    public Dictionary<string, Summary> Stats { get; init; } = [];
}
