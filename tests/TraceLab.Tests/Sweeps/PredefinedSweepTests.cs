using TraceLab.Sweeps;
using TraceLab.Sweeps.Verdicts;
using TraceLab.Tests.Workloads;
using TraceLab.Workloads;

namespace TraceLab.Tests.Sweeps;

/// <summary>
/// Every predefined sweep of a workload TraceLab has: its points resolve (valid values), and each verdict rule
/// finds the points it compares (a rule naming a value the sweep never runs would silently be "not tested").
/// </summary>
public sealed class PredefinedSweepTests
{
    public static TheoryData<string> Sweeps()
    {
        var data = new TheoryData<string>();
        foreach (var d in PredefinedSweeps.All.Where(d => WorkloadCatalog.Find(d.Workload) is not null))
            data.Add(d.Name);
        return data;
    }

    [Theory]
    [MemberData(nameof(Sweeps))]
    public void Points_resolve_and_every_rule_finds_its_points(string name)
    {
        var d = PredefinedSweeps.All.Single(x => x.Name == name);
        var workload = WorkloadCatalog.Find(d.Workload)!;
        var scenario = new Scenario("sweep", "", [], new Dictionary<string, string>());
        var points = SweepPlan.Points(d, new Dictionary<string, string>(), v => workload.Resolve(scenario, v));
        Assert.Equal(d.Series.Sum(s => d.XValues.Count(x => s.OnlyX is null || s.OnlyX.Contains(x))), points.Count);
        // Distinct points: no two run the same resolved values.
        Assert.Equal(points.Count, points.Select(
            p => string.Join("|", p.Values.OrderBy(kv => kv.Key).Select(kv => kv.Value))).Distinct().Count());

        // Traced metrics, and what rules cite, must be names the trace gives (TracedMetrics); a workload metric's name
        // is checked against a real run of the workload (Every_workload_metric_a_sweep_names_is_in_a_real_result).
        var metrics = d.Verdicts.OfType<VerdictRule>().Select(r => r.Metric).ToList();
        foreach (var m in metrics.Concat(d.PlotMetrics).Where(m => m.StartsWith("traced.", StringComparison.Ordinal)))
            Assert.Contains(m["traced.".Length..], TracedMetrics.Names);
        foreach (var cited in d.Verdicts.OfType<VerdictRule>().SelectMany(r => r.Cite))
            Assert.Contains(cited, TracedMetrics.Names);

        // Three identical repeats everywhere, with every metric a rule uses: a rule may judge anything but "not
        // tested".
        var runs = new List<SweepRunRecord>();
        foreach (var p in points)
            for (var r = 0; r < 3; r++)
            {
                var run = new SweepRunRecord
                {
                    Point = p.Index,
                    Repeat = r,
                    ElapsedNs = 1_000_000 * (p.Index + 1),
                    UserNs = 1,
                    SystemNs = 1 + p.Index,
                    VoluntarySwitches = 1,
                    InvoluntarySwitches = 1
                };
                foreach (var m in metrics)
                {
                    if (m.StartsWith("traced.", StringComparison.Ordinal)) run.Traced[m["traced.".Length..]] =
                        1 + p.Index;
                    // Derived from the run's elapsed time and the workload's iteration count.
                    else if (m == SweepMetrics.ElapsedPerIteration) run.Metrics["iterations"] = 1000;
                    else if (!SweepMetrics.BuiltIn.Contains(m)) run.Metrics[m] = 1 + p.Index;
                }
                runs.Add(run);
            }
        var data = new SweepData(d, points, runs, 3)
        {
            Canonical = (param, value) => workload.FindParameter(param)!.Validate(value),
        };
        Assert.All(d.Verdicts, rule =>
        {
            var v = rule.Judge(data);
            Assert.True(
                v.Outcome != VerdictOutcome.NotTested, $"{rule.Claim} {rule.Aspect}: {string.Join(" / ", v.Evidence)}");
            Assert.NotEqual(VerdictOutcome.InsufficientRepeats, v.Outcome);
        });
        Assert.NotEmpty(d.Claims);
        Assert.All(d.Verdicts, r => Assert.Contains(r.Claim, d.Claims));
    }

    /// <summary>Short runs of each workload: parameter values that finish in well under a second.</summary>
    private static readonly Dictionary<string, Dictionary<string, string>> QuickRuns = new()
    {
        ["timemutex"] = new() { ["iterations"] = "200" },
        ["throttle"] = new() { ["threads"] = "2", ["chunk"] = "1000", ["repeat"] = "1" },
        ["sendrecv"] = new() { ["duration-ms"] = "50" },
        ["thrdperf"] = new() { ["kind"] = "io", ["computations"] = "2", ["bias"] = "1" },
    };

    public static TheoryData<string> SweptWorkloads()
    {
        var data = new TheoryData<string>();
        foreach (var w in PredefinedSweeps.All.Select(d => d.Workload).Distinct()
            .Where(w => WorkloadCatalog.Find(w) is not null))
            data.Add(w);
        return data;
    }

    /// <summary>
    /// A workload metric that a verdict rule or a plot of a predefined sweep names must be one the workload writes:
    /// a misspelt name would leave the rule "not tested" on every real sweep. Each series of each sweep runs once,
    /// briefly, and its result is read the way a sweep reads it.
    /// </summary>
    [NativeToolsTheory]
    [MemberData(nameof(SweptWorkloads))]
    public async Task Every_workload_metric_a_sweep_names_is_in_a_real_result(string name)
    {
        var workload = WorkloadCatalog.Find(name)!;
        var exe = new NativeWorkloadBuilder(RepoPaths.Root).EnsureBuilt(name);
        var scenario = new Scenario("sweep", "", [], new Dictionary<string, string>());
        var produced = new HashSet<string>(SweepMetrics.BuiltIn) { SweepMetrics.ElapsedPerIteration };
        var named = new List<(string Sweep, string Metric)>();
        using var tmp = new TempDirectory("sweep-metrics");
        var run = 0;
        foreach (var d in PredefinedSweeps.All.Where(d => d.Workload == name))
        {
            named.AddRange(d.Verdicts.OfType<VerdictRule>().Select(r => r.Metric).Concat(d.PlotMetrics)
                .Where(m => !m.StartsWith("traced.", StringComparison.Ordinal)).Select(m => (d.Name, m)));
            foreach (var series in d.Series)
            {
                var values = new Dictionary<string, string>(d.Base);
                foreach (var (k, v) in series.Values) values[k] = v;
                values[d.XParameter] = series.OnlyX is { Count: > 0 } only ? only[0] : d.XValues[0];
                foreach (var (k, v) in QuickRuns[name]) values[k] = v;
                var resolved = workload.Resolve(scenario, values);
                var result = Path.Combine(tmp.Path, $"run{run}.json");
                using (var w = WorkloadRun.Start(exe, workload.Arguments(resolved), null, result,
                    Path.Combine(tmp.Path, $"run{run++}.log")))
                    Assert.Equal(0, await w.WaitAsync(CancellationToken.None));
                produced.UnionWith(WorkloadMetrics.Read(File.ReadAllText(result)).Keys);
            }
        }
        Assert.NotEmpty(named);
        Assert.All(named, n => Assert.True(produced.Contains(n.Metric),
            $"{n.Sweep} names the metric {n.Metric}, which no run of {name} gives ({string.Join(", ", produced)})"));
    }

    [Fact]
    public void Tm3_tp2_and_sr_judge_the_aspects_their_claims_name()
    {
        // TM3: where degradation happens, along both axes of the TM2 grid, at the same grid point.
        var tm2 = PredefinedSweeps.Find("timemutex", "TM3")!;
        var points = tm2.Verdicts.OfType<DegradationPointRule>().ToList();
        Assert.Equal(["depth", "delay"], points.Select(r => r.Along));
        Assert.All(points, r => Assert.Equal((0, "TM3", "cs-nested", "cs"), (r.Steps, r.Claim, r.Pairs.A, r.Pairs.B)));
        // TP2: the growth shape, serial against the sum 1..N and concurrent against N.
        var growth = Assert.Single(PredefinedSweeps.Find("thrdperf", "TP2")!.Verdicts.OfType<GrowthExponentRule>());
        Assert.Equal(("serial", "concurrent", "computations"), (growth.Pairs.A, growth.Pairs.B, growth.Along));
        Assert.Same(GrowthModel.SumOneToN, growth.ModelA);
        Assert.Same(GrowthModel.Longest, growth.ModelB);
        // SR: the receiver's own switches for SR1, the process total for congestion (SR3, SR4), each saying so.
        var sr = PredefinedSweeps.Find("sendrecv", "sr")!.Verdicts.OfType<VerdictRule>().ToList();
        Assert.Contains(sr, r => r.Claim == "SR1" && r.Metric == "receiver.switchesPerIteration"
            && r.Aspect.Contains("receiver", StringComparison.Ordinal));
        Assert.DoesNotContain(sr, r => r.Claim == "SR1" && r.Metric == "switches");
        Assert.All(sr.Where(r => r.Metric == "switches"),
            r => Assert.Contains("process total", r.Aspect, StringComparison.Ordinal));
        Assert.Equal(["SR3", "SR4"], sr.Where(r => r.Metric == "switches").Select(r => r.Claim));
    }
}
