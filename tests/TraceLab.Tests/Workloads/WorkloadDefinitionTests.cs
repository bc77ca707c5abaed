using System.Text.RegularExpressions;
using TraceLab.Reporting;
using TraceLab.Workloads;

namespace TraceLab.Tests.Workloads;

/// <summary>
/// The workload definitions of seeds 001, 003 and 004: their parameters validate the way the native programs do, their
/// scenarios resolve and name real claims, and the command lines they build use options the programs accept.
/// </summary>
public sealed class WorkloadDefinitionTests
{
    private static readonly Dictionary<string, string> None = [];

    private static IReadOnlyDictionary<string, string> Resolve(
        WorkloadDefinition w, params (string Key, string Value)[] overrides) =>
        w.Resolve(w.Scenarios[0], overrides.ToDictionary(o => o.Key, o => o.Value, StringComparer.OrdinalIgnoreCase));

    private static string Refused(WorkloadDefinition w, string key, string value) =>
        Assert.Throws<WorkloadException>(() => Resolve(w, (key, value))).Message;

    [Theory]
    [InlineData("throttle", "001")]
    [InlineData("sendrecv", "003")]
    [InlineData("thrdperf", "004")]
    public void Catalog_lists_the_workload_with_its_seed(string name, string seed)
    {
        var w = WorkloadCatalog.Find(name);
        Assert.NotNull(w);
        Assert.Equal(seed, w!.Seed);
    }

    [Fact]
    public void Every_scenario_resolves_and_names_claims_of_its_own_seed()
    {
        var claimPrefix =
            new Dictionary<string, string> { ["000"] = "TM", ["001"] = "TH", ["003"] = "SR", ["004"] = "TP" };
        foreach (var w in WorkloadCatalog.All)
        {
            Assert.NotEmpty(w.Scenarios);
            foreach (var s in w.Scenarios)
            {
                var values = w.Resolve(s, None);
                Assert.Equal(w.Parameters.Count, values.Count);
                Assert.All(s.Parameters.Keys, k => Assert.NotNull(w.FindParameter(k)));
                Assert.NotEmpty(s.Claims);
                Assert.All(s.Claims, c => Assert.Matches($"^{claimPrefix[w.Seed]}[0-9]+$", c));
            }
        }
    }

    [Fact]
    public void Throttle_scenarios_are_the_seed_experiment_at_four_semaphore_sizes()
    {
        var w = ThrottleWorkload.Definition;
        var actives = w.Scenarios.ToDictionary(s => s.Name, s => w.Resolve(s, None)["active"]);
        Assert.Equal(new Dictionary<string, string>
        {
            ["unthrottled"] = "0",
            ["one-active"] = "1",
            ["per-cpu"] = "2",
            ["oversubscribed"] = "4"
        }, actives);
        Assert.All(w.Scenarios, s => Assert.Equal("64", w.Resolve(s, None)["threads"]));
        Assert.Contains("TH2", w.FindScenario("unthrottled")!.Claims);
    }

    [Theory]
    [InlineData("threads", "0", "must be between 1 and 1024")]
    [InlineData("threads", "1025", "must be between 1 and 1024")]
    [InlineData("active", "-1", "must be between 0 and 1024")]
    [InlineData("chunk", "0", "must be between 1 and")]
    [InlineData("repeat", "lots", "expected an integer")]
    [InlineData("affinity", "0-999", "does not exist")]
    [InlineData("priority", "20", "must be between -20 and 19")]
    public void Throttle_refuses_out_of_range_values(string key, string value, string expected) =>
        Assert.Contains(expected, Refused(ThrottleWorkload.Definition, key, value));

    [Fact]
    public void Throttle_refuses_a_sum_that_overflows_64_bits_and_accepts_the_seed_size()
    {
        var w = ThrottleWorkload.Definition;
        var message =
            Assert.Throws<WorkloadException>(() => Resolve(w, ("threads", "1024"), ("chunk", "30000000"))).Message;
        Assert.Contains("overflows 64 bits", message);
        // The seed's own size: 64 x 30,000,000 terms, sum 1.8e18 < 2^63.
        var seed = Resolve(w, ("threads", "64"), ("chunk", "30000000"));
        Assert.Equal("30000000", seed["chunk"]);
    }

    [Theory]
    [InlineData("event-inside-lock", "1")]
    [InlineData("event-outside-lock", "2")]
    [InlineData("lock-free", "3")]
    [InlineData("receiver-only-lock", "4")]
    [InlineData("4", "4")]
    public void SendRecv_variant_accepts_names_and_numbers(string value, string expected) =>
        Assert.Equal(expected, Resolve(SendRecvWorkload.Definition, ("variant", value))["variant"]);

    [Fact]
    public void SendRecv_has_one_scenario_per_variant_each_testing_its_claim()
    {
        var w = SendRecvWorkload.Definition;
        foreach (var (name, number) in SendRecvWorkload.Variants)
        {
            var s = w.FindScenario(name);
            Assert.NotNull(s);
            Assert.Equal(
                number.ToString(System.Globalization.CultureInfo.InvariantCulture), w.Resolve(s!, None)["variant"]);
            Assert.Equal([$"SR{number}"], s!.Claims);
        }
    }

    [Theory]
    [InlineData("variant", "sometimes", "one of event-inside-lock, event-outside-lock, lock-free, receiver-only-lock")]
    [InlineData("variant", "5", "must be between 1 and 4")]
    [InlineData("senders", "0", "must be between 1 and 16")]
    [InlineData("senders", "17", "must be between 1 and 16")]
    [InlineData("duration-ms", "0", "must be between 1 and")]
    public void SendRecv_refuses_out_of_range_values(string key, string value, string expected) =>
        Assert.Contains(expected, Refused(SendRecvWorkload.Definition, key, value));

    [Theory]
    [InlineData("kind", "io", "2")]
    [InlineData("kind", "cpu", "1")]
    [InlineData("mode", "concurrent", "2")]
    [InlineData("order", "ascending", "2")]
    [InlineData("max-concurrency", "0", "0")]
    public void ThrdPerf_names_map_to_the_native_numbers(string key, string value, string expected) =>
        Assert.Equal(expected, Resolve(ThrdPerfWorkload.Definition, (key, value))[key]);

    [Theory]
    [InlineData("kind", "disk", "one of cpu, io")]
    [InlineData("mode", "parallel", "one of serial, concurrent")]
    [InlineData("order", "random", "one of descending, ascending")]
    [InlineData("computations", "1", "must be between 2 and 20")]
    [InlineData("computations", "21", "must be between 2 and 20")]
    [InlineData("bias", "0", "must be between 1 and")]
    [InlineData("max-concurrency", "21", "must be between 0 and 20")]
    public void ThrdPerf_refuses_out_of_range_values(string key, string value, string expected) =>
        Assert.Contains(expected, Refused(ThrdPerfWorkload.Definition, key, value));

    [Fact]
    public void ThrdPerf_scenarios_cover_both_kinds_and_modes_and_a_pinned_run()
    {
        var w = ThrdPerfWorkload.Definition;
        var combos =
            w.Scenarios.Select(s => w.Resolve(s, None)).Select(v => (v["kind"], v["mode"], v["affinity"])).ToList();
        Assert.Contains(("1", "1", "all"), combos);
        Assert.Contains(("1", "2", "all"), combos);
        Assert.Contains(("2", "1", "all"), combos);
        Assert.Contains(("2", "2", "all"), combos);
        Assert.Contains(("1", "2", "0"), combos);
        Assert.Equal("0", w.Resolve(w.FindScenario("cpu-pinned-concurrent")!, None)["affinity"]);
    }

    /// <summary>Every option the C# definition passes must be one the native program documents in its --help.</summary>
    [NativeToolsTheory]
    [InlineData("throttle")]
    [InlineData("sendrecv")]
    [InlineData("thrdperf")]
    public void Command_line_uses_only_options_the_native_program_accepts(string name)
    {
        var w = WorkloadCatalog.Find(name)!;
        var exe = new NativeWorkloadBuilder(RepoPaths.Root).EnsureBuilt(name);
        var (code, help, _) = ProcessOutput.Run(exe, "--help");
        Assert.Equal(0, code);
        var args = w.Arguments(w.Resolve(w.Scenarios[0], None));
        var options = args.Where(a => a.StartsWith("--", StringComparison.Ordinal)).ToList();
        Assert.Equal(w.Parameters.Count, options.Count);
        foreach (var o in options)
            Assert.Matches(new Regex($"(^|\\s){Regex.Escape(o)}\\s"), help);
        Assert.All(w.Parameters, p => Assert.Contains("--" + p.Name, options));
    }

    [Fact]
    public void Result_with_metrics_computations_and_roles_parses()
    {
        const string json = """
            {"workload":"thrdperf","pid":7,"params":{},"objects":[],"beginNs":1,"endNs":2,"elapsedNs":1,
             "process":{"userNs":0,"systemNs":0,"voluntarySwitches":0,"involuntarySwitches":0},
             "metrics":{"elapsedMs":81.5,"averageResponse":3.25,"threadsUsed":2},
             "computations":[{"index":0,"lengthMs":50,"tid":9,"startNs":10,"finishNs":54000000,
                              "turnaroundNs":54000000,"responseRatio":1.08,"endOrder":1}],
             "threads":[{"index":0,"tid":9,"role":"computation 0","userNs":1,"systemNs":2,"voluntarySwitches":3,
                         "involuntarySwitches":4,"iterations":1}]}
            """;
        var r = WorkloadResult.Parse(json, "test");
        Assert.Equal(81.5, r.Metrics["elapsedMs"]);
        Assert.Equal(2, r.Metrics["threadsUsed"]);
        var c = Assert.Single(r.Computations);
        Assert.Equal(50, c.LengthMs);
        Assert.Equal(1.08, c.ResponseRatio);
        Assert.Equal(1, c.EndOrder);
        Assert.Equal("computation 0", r.Threads[0].Role);
        // A timemutex result has neither: both stay empty, not null.
        var old = WorkloadResult.Parse("""{"workload":"timemutex","threads":[{"index":0,"tid":1}]}""", "test");
        Assert.Empty(old.Metrics);
        Assert.Empty(old.Computations);
        Assert.Null(old.Threads[0].Role);
    }

    [Fact]
    public void Metrics_line_groups_counts_keeps_fractions_and_shortens_huge_sums()
    {
        var text = WorkloadMetricsText.Format(new Dictionary<string, double>
        {
            ["receiveCount"] = 703238,
            ["averageResponse"] = 3.2578,
            ["sum"] = 1843200000960000000,
        });
        Assert.Equal("receiveCount 703,238, averageResponse 3.258, sum 1.8432E+18", text);
    }

    [Fact]
    public void Report_markdown_shows_the_workload_figures_and_json_round_trips_them()
    {
        var report = new RunReport
        {
            Capture = new CaptureSection { Backend = "tracefs", TraceFile = "trace.dat" },
            Region = new RegionSection { Source = "markers" },
            Threads = [],
            Process = new ProcessSection
            {
                Pid = 1,
                WorkloadMetrics = new Dictionary<string, double> { ["sumOk"] = 1, ["receiveCount"] = 22485 }
            },
        };
        Assert.Contains("Workload's own figures: sumOk 1, receiveCount 22,485", ReportMarkdown.Render(report));
        var back = ReportJson.Deserialize(ReportJson.Serialize(report));
        Assert.Equal(22485, back.Process!.WorkloadMetrics!["receiveCount"]);
        // A workload without figures (timemutex) gets no line.
        report.Process = new ProcessSection { Pid = 1 };
        Assert.DoesNotContain("Workload's own figures", ReportMarkdown.Render(report));
    }
}

/// <summary>Skips (with the reason) where cmake or a C compiler is missing.</summary>
public sealed class NativeToolsTheoryAttribute : TheoryAttribute
{
    public NativeToolsTheoryAttribute()
    {
        var reason = TestEnvironment.NativeToolsReason(false);
        if (reason is not null) Skip = reason;
    }
}
