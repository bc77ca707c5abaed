using TraceLab.Sweeps;
using TraceLab.Sweeps.Verdicts;
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

        // Three identical repeats everywhere, with every metric a rule uses: a rule may judge anything but "not
        // tested".
        var metrics = d.Verdicts.OfType<VerdictRule>().Select(r => r.Metric).ToList();
        var runs = new List<SweepRunRecord>();
        foreach (var p in points)
            for (var r = 0; r < 3; r++)
            {
                var run = new SweepRunRecord { Point = p.Index, Repeat = r, ElapsedNs = 1_000_000 * (p.Index + 1),
                    UserNs = 1, SystemNs = 1 + p.Index, VoluntarySwitches = 1, InvoluntarySwitches = 1 };
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
