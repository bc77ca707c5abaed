using TraceLab.Sweeps;
using TraceLab.Sweeps.Claims;
using TraceLab.Workloads;

namespace TraceLab.Tests.Sweeps;

/// <summary>
/// Writes a claims results folder by hand: a predefined sweep's real points (as `claims --run` plans them) with
/// runs whose numbers the test chooses, so the verdicts are known before the report reads them.
/// </summary>
internal static class HandMadeResults
{
    public static readonly DateTimeOffset Start = new(2026, 11, 25, 14, 0, 0, TimeSpan.Zero);

    /// <param name="run">The record of one run of a point (null: not run yet), numbers filled in by the test.</param>
    public static SweepState Write(string modeDirectory, string sweep, Func<SweepPoint, int, SweepRunRecord?> run,
        int repeats = ClaimsRunPlan.Repeats)
    {
        var state = Planned(sweep, repeats);
        state.StartedUtc = Start;
        var points = state.SweepPoints();
        for (var seq = 0; seq < state.Order.Count; seq++)
        {
            var o = state.Order[seq];
            if (run(points[o.Point], o.Repeat) is not { } r) continue;
            r.Point = o.Point;
            r.Repeat = o.Repeat;
            r.Sequence = seq;
            r.StartedUtc = Start.AddSeconds(seq);
            state.Runs.Add(r);
        }
        state.Complete = state.Order.All(state.IsDone);
        var dir = Path.Combine(modeDirectory, sweep);
        Directory.CreateDirectory(dir);
        SweepStateStore.Save(dir, state);
        return state;
    }

    /// <summary>A predefined sweep as planned before its first run (order seed 1), not saved.</summary>
    public static SweepState Planned(string sweep, int repeats = ClaimsRunPlan.Repeats)
    {
        var d = ClaimCatalog.Sweeps().Single(x => x.Name == sweep);
        var points = Points(d);
        return new SweepState
        {
            Sweep = d.Name,
            Workload = d.Workload,
            Repeats = repeats,
            OrderSeed = 1,
            Points = points.Select(p => new SweepPointState(p.Index, p.Series, p.X, p.Values.ToDictionary())).ToList(),
            Order = [.. SweepPlan.Order(points.Count, repeats, 1)],
        };
    }

    public static IReadOnlyList<SweepPoint> Points(SweepDefinition d)
    {
        var workload = WorkloadCatalog.Find(d.Workload)!;
        var scenario = new Scenario("test", "", [], new Dictionary<string, string>());
        return SweepPlan.Points(d, new Dictionary<string, string>(), v => workload.Resolve(scenario, v));
    }

    public static SweepRunRecord Elapsed(double seconds, double system = 0, long invol = 0) => new()
    {
        ElapsedNs = (long)(seconds * 1e9),
        SystemNs = (long)(system * 1e9),
        UserNs = (long)(seconds * 1e9),
        InvoluntarySwitches = invol,
    };

    public static void Log(string modeDirectory, int cpus, params LoadWindow[] windows) =>
        new ClaimsRunLog
        {
            Machine = new MachineInfo(cpus, "test CPU", "Linux", "6.1-test", ".NET test"),
            Windows = [.. windows],
        }.Save(modeDirectory);

    /// <summary>A window in which others used <paramref name="foreign"/> of the CPUs besides our runs' 1 s.</summary>
    public static LoadWindow Window(string sweep, double foreign) => new()
    {
        Sweep = sweep,
        StartedUtc = Start,
        FinishedUtc = Start.AddSeconds(10),
        Runs = 10,
        TotalTicks = 1000,
        BusyTicks = 100 + (long)(foreign * 1000),
        OwnCpuNs = 1_000_000_000,
        LoadAverages = [1.5, 2.5, 3.5],
    };
}
