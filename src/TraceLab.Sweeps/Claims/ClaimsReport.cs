using TraceLab.Sweeps.Calibration;
using TraceLab.Sweeps.Verdicts;

namespace TraceLab.Sweeps.Claims;

/// <summary>
/// Every seed claim with its latest verdict from a claims results folder (docs/claims.md#claims-report): the sweep
/// it came from, the numbers, the machine it was measured on and whether that machine can decide the claim.
/// </summary>
public sealed class ClaimsReport
{
    /// <summary>Above this share of the CPUs taken by others, a claim that needs idle CPUs is undecided.</summary>
    public const double MaxForeignShare = 0.25;

    public required string Directory { get; init; }
    public bool Quick { get; init; }
    /// <summary>Results of traced runs (`claims --run --trace`).</summary>
    public bool Traced { get; init; }
    /// <summary>The machine the results were measured on (null when no sweep has run yet).</summary>
    public MachineInfo? Machine { get; init; }
    public DateTimeOffset? FirstRunUtc { get; init; }
    public DateTimeOffset? LastRunUtc { get; init; }
    /// <summary>1-minute load averages sampled during the run (every sweep), with the workloads' own threads.</summary>
    public IReadOnlyList<double> LoadAverages { get; init; } = [];
    public required IReadOnlyList<SweepResult> Sweeps { get; init; }
    public required IReadOnlyList<ClaimResult> Claims { get; init; }
}

/// <summary>One predefined sweep as found in the results folder.</summary>
public sealed record SweepResult(SweepDefinition Definition, string Directory, bool Measured)
{
    public bool Complete { get; init; }
    public int RunsOk { get; init; }
    public int RunsFailed { get; init; }
    public int RunsPlanned { get; init; }
    public int Repeats { get; init; }
    public DateTimeOffset? FirstRunUtc { get; init; }
    public DateTimeOffset? LastRunUtc { get; init; }
    public IReadOnlyList<Verdict> Verdicts { get; init; } = [];
    public string? ShortRunWarning { get; init; }
    /// <summary>Shortest median elapsed of a point (s), to show that runs were long enough to time.</summary>
    public double? ShortestPointSeconds { get; init; }
    /// <summary>Other processes' share of the CPUs while the sweep ran (null: not recorded).</summary>
    public double? ForeignShare { get; init; }
    public IReadOnlyList<double> LoadAverages { get; init; } = [];
    public IReadOnlyList<SeriesCalibration>? Calibration { get; init; }
    /// <summary>Points measured again because their median was under the calibrated minimum.</summary>
    public IReadOnlyList<PointRerun> Reruns { get; init; } = [];
    /// <summary>Points that stayed under the calibrated minimum (a cap was hit), or null.</summary>
    public string? CalibrationWarning { get; init; }
    public IReadOnlyDictionary<string, string> Overrides { get; init; } = new Dictionary<string, string>();
}

/// <summary>
/// One claim's verdict: its aspects, and whether the machine it ran on can decide it (<paramref name="Decision"/> in a
/// few words, <paramref name="Why"/> in full when it cannot or only conditionally).
/// </summary>
public sealed record ClaimResult(SeedClaim Claim, SweepResult Sweep, string Outcome, IReadOnlyList<Verdict> Aspects,
    bool Decidable, string Decision, string Why)
{
    public const string NotMeasured = "not measured";
}
