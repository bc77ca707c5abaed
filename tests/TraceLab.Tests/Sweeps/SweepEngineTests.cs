using System.Text.Json;
using TraceLab.Sweeps;
using TraceLab.Sweeps.Output;
using TraceLab.Sweeps.Verdicts;

namespace TraceLab.Tests.Sweeps;

/// <summary>Order, failure handling and resume of the sweep engine, with a fake point runner (no processes).</summary>
public sealed class SweepEngineTests
{
    private sealed class FakeRunner : IPointRunner
    {
        public List<(int Point, int Repeat)> Calls { get; } = [];
        public Func<SweepPoint, int, bool>? FailWhen { get; init; }
        public int? CancelOnCall { get; init; }
        public CancellationTokenSource? Cancel { get; init; }

        public Task<SweepRunRecord> RunAsync(
            SweepPoint point, int repeat, string runDirectory, CancellationToken cancellationToken)
        {
            Calls.Add((point.Index, repeat));
            Assert.True(Directory.Exists(runDirectory));
            if (CancelOnCall == Calls.Count)
            {
                Cancel!.Cancel();
                cancellationToken.ThrowIfCancellationRequested();
            }
            if (FailWhen?.Invoke(point, repeat) == true) throw new InvalidOperationException("boom\nsecond line");
            var x = int.Parse(point.X);
            return Task.FromResult(new SweepRunRecord
            {
                ElapsedNs = (point.Series == "cs" ? 1 : 10) * x * 1_000_000L
                + repeat,
                UserNs = 1,
                SystemNs = 2
            });
        }
    }

    private static SweepDefinition Definition() => new()
    {
        Name = "t",
        Workload = "timemutex",
        Title = "test",
        XParameter = "threads",
        XValues = ["1", "2", "3"],
        Series = SweepSeries.Grid(("which", ["cs", "mutex"])),
        Verdicts = [new DominanceRule("TM1", "cs faster", "elapsed", new PointPairs("which", "cs", "mutex"))],
    };

    private static SweepState NewState(int repeats, int seed = 42)
    {
        var points = SweepPlan.Points(Definition(), new Dictionary<string, string> { ["iterations"] = "10" }, v => v);
        return new SweepState
        {
            Sweep = "t",
            Workload = "timemutex",
            Repeats = repeats,
            OrderSeed = seed,
            Points = points.Select(p => new SweepPointState(p.Index, p.Series, p.X, p.Values.ToDictionary())).ToList(),
            Order = [.. SweepPlan.Order(points.Count, repeats, seed)],
        };
    }

    [Fact]
    public void Points_are_the_product_of_series_and_x_with_overrides_and_series_values()
    {
        var points = SweepPlan.Points(Definition(), new Dictionary<string, string> { ["iterations"] = "10" }, v => v);
        Assert.Equal(6, points.Count);
        Assert.All(points, p => Assert.Equal("10", p.Values["iterations"]));
        Assert.Equal(["cs", "cs", "cs", "mutex", "mutex", "mutex"], points.Select(p => p.Values["which"]));
        Assert.Equal(["1", "2", "3", "1", "2", "3"], points.Select(p => p.Values["threads"]));
    }

    [Fact]
    public void Order_visits_every_point_once_per_repeat_shuffled_and_reproducible_from_its_seed()
    {
        var order = SweepPlan.Order(6, 4, seed: 7);
        Assert.Equal(24, order.Count);
        for (var r = 0; r < 4; r++)
        {
            var block = order.Skip(r * 6).Take(6).ToList();
            Assert.All(block, x => Assert.Equal(r, x.Repeat));
            Assert.Equal(Enumerable.Range(0, 6), block.Select(x => x.Point).Order());
        }
        Assert.Equal(order, SweepPlan.Order(6, 4, seed: 7));
        // Shuffled: not every repeat in point order, and another seed gives another order.
        Assert.Contains(Enumerable.Range(0, 4),
            r => !order.Skip(r * 6).Take(6).Select(x => x.Point).SequenceEqual(Enumerable.Range(0, 6)));
        Assert.NotEqual(order, SweepPlan.Order(6, 4, seed: 8));
    }

    [Fact]
    public async Task A_failing_run_is_recorded_and_the_sweep_goes_on()
    {
        using var dir = new TempDirectory("sweep-fail");
        var state = NewState(3);
        var runner = new FakeRunner { FailWhen = (p, r) => p.Index == 2 && r == 1 };
        Assert.True(await new SweepRunner(dir.Path, state, runner).RunAsync(CancellationToken.None));
        Assert.Equal(18, runner.Calls.Count);
        var failed = Assert.Single(state.Runs, r => !r.Ok);
        Assert.Equal((2, 1), (failed.Point, failed.Repeat));
        Assert.Equal("boom second line", failed.Error);
        Assert.True(SweepStateStore.Load(dir.Path).Complete);
    }

    [Fact]
    public async Task Resume_after_an_interruption_runs_only_what_is_missing()
    {
        using var dir = new TempDirectory("sweep-resume");
        var state = NewState(3);
        SweepStateStore.Save(dir.Path, state);
        using var cts = new CancellationTokenSource();
        var first = new FakeRunner { CancelOnCall = 5, Cancel = cts };
        Assert.False(await new SweepRunner(dir.Path, state, first).RunAsync(cts.Token));
        // The interrupted (5th) run is not recorded; the state on disk holds the 4 that finished.
        var saved = SweepStateStore.Load(dir.Path);
        Assert.Equal(4, saved.Runs.Count);
        Assert.False(saved.Complete);
        Assert.Equal(first.Calls.Take(4), saved.Runs.Select(r => (r.Point, r.Repeat)));

        var second = new FakeRunner();
        Assert.True(await new SweepRunner(dir.Path, saved, second).RunAsync(CancellationToken.None));
        Assert.Equal(14, second.Calls.Count);
        Assert.Empty(second.Calls.Intersect(first.Calls.Take(4)));
        Assert.Contains(first.Calls[4], second.Calls);
        var all = SweepStateStore.Load(dir.Path);
        Assert.Equal(18, all.Runs.Select(r => (r.Point, r.Repeat)).Distinct().Count());
        Assert.Equal(all.Order.Select((o, i) => i), all.Runs.Select(r => r.Sequence).Order());
    }

    [Fact]
    public async Task Outputs_have_one_csv_row_per_run_and_json_statistics_and_verdicts()
    {
        using var dir = new TempDirectory("sweep-out");
        var state = NewState(3);
        await new SweepRunner(dir.Path, state, new FakeRunner { FailWhen = (p, r) => p.Index == 0 && r == 0 })
            .RunAsync(CancellationToken.None);
        var data = new SweepData(Definition(), state.SweepPoints(), state.Runs, 3);
        var summary = SweepOutputs.Write(dir.Path, data, state, MachineInfo.Current());

        var lines = File.ReadAllLines(dir.File("sweep.csv"));
        Assert.Equal(1 + 18, lines.Length);
        var header = lines[0].Split(',');
        Assert.Equal(["point", "series", "x", "repeat", "sequence", "status"], header[..6]);
        Assert.Contains("elapsed_ns", header);
        Assert.Contains("involuntary_switches", header);
        Assert.Single(lines, l => l.Contains(",failed,"));
        // Rows are in execution order.
        var seq = Array.IndexOf(header, "sequence");
        Assert.Equal(Enumerable.Range(0, 18).Select(i => i.ToString()), lines.Skip(1).Select(l => l.Split(',')[seq]));

        using var json = JsonDocument.Parse(File.ReadAllText(dir.File("sweep.json")));
        var root = json.RootElement;
        Assert.Equal(6, root.GetProperty("points").GetArrayLength());
        var p1 = root.GetProperty("points")[1];
        var elapsed = p1.GetProperty("stats").GetProperty("elapsed");
        // Point 1 = cs, 2 threads: 2 ms + repeat ns → median 2.000001 ms.
        Assert.Equal(0.002000001, elapsed.GetProperty("median").GetDouble(), 12);
        Assert.Equal(3, elapsed.GetProperty("n").GetInt32());
        Assert.Equal(2, root.GetProperty("points")[0].GetProperty("ok").GetInt32());
        Assert.Equal("insufficient repeats", root.GetProperty("verdicts")[0].GetProperty("outcome").GetString());
        Assert.Equal(Environment.ProcessorCount, root.GetProperty("machine").GetProperty("cpus").GetInt32());
        Assert.Equal(1, summary.RunsFailed);

        var report = File.ReadAllText(dir.File("report.md"));
        Assert.Contains("| TM1 | insufficient repeats | cs faster | **insufficient repeats** |", report);
        Assert.Contains("![t-elapsed.svg](t-elapsed.svg)", report);
        Assert.Contains("| p01 | cs | 2 | 3/0 | 0.002 [0.002 – 0.002] |", report);
        Assert.True(File.Exists(dir.File("t-elapsed.svg")));
        Assert.Empty(Directory.GetFiles(dir.Path, ".*.tmp"));
    }
}
