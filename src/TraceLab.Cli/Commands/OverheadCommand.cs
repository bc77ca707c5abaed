using System.CommandLine;
using System.Globalization;
using Spectre.Console;
using TraceLab.Analyzers;
using TraceLab.Capture.Linux;
using TraceLab.Cli.CommandLine;
using TraceLab.Workloads;

namespace TraceLab.Cli.Commands;

/// <summary>
/// `tracelab overhead WORKLOAD SCENARIO`: how much tracing slows the workload down. Runs the scenario untraced and
/// traced (as `tracelab trace` does, once per syscall set), interleaved round by round so that drift on the machine
/// hits all variants alike, and reports per syscall set the slowdown = traced elapsed / untraced elapsed of the same
/// round − 1: median, min and max over the rounds (docs/metrics.md#overhead). Elapsed is the workload's
/// own measured region (workload.json elapsedNs), so building, starting the capture and analysis are not in it.
/// </summary>
public sealed class OverheadCommand(IAnsiConsole console)
{
    private readonly IAnsiConsole _console = console;

    public static Command Create(IAnsiConsole console)
    {
        var workload = new Argument<string>("workload") { Description = "workload to run (see `tracelab scenarios`)" };
        var scenario = new Argument<string>("scenario") { Description = "named scenario of the workload" };
        var repeat = new Option<int>("--repeat")
        {
            Description = "rounds (each: one untraced run, then one traced run per syscall set)",
            DefaultValueFactory = _ => 5,
        };
        var syscalls = new Option<IReadOnlyList<SyscallSet>>("--syscalls")
        {
            Description = "syscall sets to measure, comma-separated: none, lock, all",
            DefaultValueFactory = _ => [SyscallSet.None, SyscallSet.Lock, SyscallSet.All],
            CustomParser = r => SharedOptions.ParseOrError(r, ParseSets, []),
        };
        var bufferKb = SharedOptions.BufferKb();
        var parameters = new WorkloadParameterOptions();
        var command = new Command("overhead",
            "slowdown of a scenario when traced: untraced and traced runs interleaved, " +
            "median and min/max per syscall set")
        {
            workload, scenario, repeat, syscalls, bufferKb,
        };
        parameters.AddTo(command);
        CommandActions.Set(command, (r, ct) => new OverheadCommand(console).RunAsync(
            new Settings(r.GetValue(workload)!, r.GetValue(scenario)!, parameters.Overrides(r), r.GetValue(repeat),
                r.GetValue(syscalls)!, r.GetValue(bufferKb)), ct));
        return command;
    }

    public sealed record Settings(
        string Workload, string Scenario, IReadOnlyDictionary<string, string> Overrides, int Repeat,
        IReadOnlyList<SyscallSet> Sets, int BufferKb);

    /// <summary>
    /// One run's own figures: elapsed (the measured region) and the process's user + system CPU time (getrusage).
    /// </summary>
    public readonly record struct RunTimes(long ElapsedNs, long CpuNs)
    {
        public static RunTimes Of(WorkloadResult r) => new(r.ElapsedNs, r.Process.UserNs + r.Process.SystemNs);
    }

    /// <summary>Per syscall set: the per-round slowdowns, and the untraced / traced run times.</summary>
    public sealed record SetResult(SyscallSet Set, RunTimes[] Untraced, RunTimes[] Traced, long LostEvents)
    {
        /// <summary>traced elapsed / untraced elapsed of the same round − 1.</summary>
        public double[] Slowdowns { get; } =
            [.. Traced.Select((t, i) => (double)t.ElapsedNs / Untraced[i].ElapsedNs - 1)];
        /// <summary>
        /// The same for the workload's CPU time (user + system): the work tracing adds, whatever the scheduling luck.
        /// </summary>
        public double[] CpuSlowdowns { get; } =
            [.. Traced.Select((t, i) => Untraced[i].CpuNs > 0 ? (double)t.CpuNs / Untraced[i].CpuNs - 1 : double.NaN)];
        public long[] UntracedNs => [.. Untraced.Select(r => r.ElapsedNs)];
        public long[] TracedNs => [.. Traced.Select(r => r.ElapsedNs)];
        public double Median => OverheadCommand.Median(Slowdowns);
        public double Min => Slowdowns.Min();
        public double Max => Slowdowns.Max();
        /// <summary>95 % distribution-free interval of the median slowdown; null under 6 rounds.</summary>
        public (double Low, double High, double Coverage)? MedianInterval => Overhead.MedianInterval.Of(Slowdowns);
        public double CpuMedian => CpuSlowdowns.Any(x => !double.IsNaN(x))
            ? OverheadCommand.Median([.. CpuSlowdowns.Where(x => !double.IsNaN(x))]) : double.NaN;
    }

    public async Task<int> RunAsync(Settings s, CancellationToken cancellationToken = default)
    {
        var results = await MeasureAsync(s, cancellationToken);
        var table = new Table()
            .Title("Capture overhead (workload's own elapsed; slowdown = traced / untraced of the same round − 1)");
        foreach (var c in new[] { "syscalls", "rounds", "untraced median ms", "traced median ms", "slowdown median",
            "95 % CI of median", "min", "max", "CPU time slowdown median", "lost events" })
            table.AddColumn(new TableColumn(c).RightAligned());
        var inv = CultureInfo.InvariantCulture;
        foreach (var r in results)
        {
            table.AddRow(r.Set.ToString().ToLowerInvariant(), r.Slowdowns.Length.ToString(inv),
                (Median(r.UntracedNs) / 1e6).ToString("F1", inv), (Median(r.TracedNs) / 1e6).ToString("F1", inv),
                Percent(r.Median), r.MedianInterval is { } ci ? $"{Percent(ci.Low)} … {Percent(ci.High)}"
                    : "n/a (< 6 rounds)",
                Percent(r.Min), Percent(r.Max), Percent(r.CpuMedian), r.LostEvents.ToString("N0", inv));
        }

        _console.Write(table);
        _console.MarkupLine("[grey]CI: order-statistic interval of the median (no distribution assumed). CPU time: the "
            + "workload's user + system (getrusage), traced / untraced − 1. Definitions: docs/metrics.md#overhead[/]");
        return ExitCodes.Ok;
    }

    public async Task<List<SetResult>> MeasureAsync(Settings s, CancellationToken cancellationToken = default)
    {
        if (s.Repeat is < 1 or > 100) throw new UsageException("--repeat must be between 1 and 100");
        var (workload, scenario, values) = WorkloadChoice.Resolve(s.Workload, s.Scenario, s.Overrides);
        Tracefs.Locate();
        var exe = new NativeWorkloadBuilder(RepositoryLayout.FindRoot()).EnsureBuilt(workload.Name);
        var quiet = AnsiConsole.Create(new AnsiConsoleSettings
        {
            Out = new AnsiConsoleOutput(TextWriter.Null),
            Interactive = InteractionSupport.No
        });

        var untraced = new List<RunTimes>();
        var traced = s.Sets.ToDictionary(x => x, _ => new List<RunTimes>());
        var lost = s.Sets.ToDictionary(x => x, _ => 0L);
        var scratch = Directory.CreateTempSubdirectory("tracelab-overhead-").FullName;
        try
        {
            for (var round = 0; round < s.Repeat; round++)
            {
                _console.MarkupLine(Markup.Escape($"round {round + 1}/{s.Repeat}: untraced, then traced with "
                    + $"{string.Join(", ", s.Sets).ToLowerInvariant()}"));
                untraced.Add(await RunUntracedAsync(exe, workload.Arguments(values), scratch, cancellationToken));
                foreach (var set in s.Sets)
                {
                    var dir = Path.Combine(scratch, $"traced-{round}-{set}");
                    var settings = new TraceCommand.Settings(workload.Name, scenario.Name)
                    {
                        Overrides = s.Overrides,
                        Out = dir,
                        Force = true,
                        BufferKb = s.BufferKb,
                        Syscalls = set,
                        Analyses = AnalysisSelection.Threads,
                    };
                    var code = await new TraceCommand(quiet).RunAsync(settings);
                    if (code != ExitCodes.Ok) throw new WorkloadException($"traced run ({set}) exited {code}");
                    var result = WorkloadResult.Parse(await File.ReadAllTextAsync(
                        Path.Combine(dir, "workload.json"), cancellationToken), "workload.json");
                    traced[set].Add(RunTimes.Of(result));
                    lost[set] += LostEvents(Path.Combine(dir, "report.json"));
                    Directory.Delete(dir, recursive: true);
                }
            }
        }
        finally
        {
            try { Directory.Delete(scratch, recursive: true); }
            catch (IOException) { }
        }

        return s.Sets.Select(set => new SetResult(set, [.. untraced], [.. traced[set]], lost[set])).ToList();
    }

    private static async Task<RunTimes> RunUntracedAsync(
        string exe, IReadOnlyList<string> arguments, string scratch, CancellationToken cancellationToken)
    {
        var result = Path.Combine(scratch, "untraced.json");
        using var run =
            WorkloadRun.Start(exe, arguments, markerPath: null, result, Path.Combine(scratch, "untraced.log"));
        var code = await run.WaitAsync(cancellationToken);
        if (code != 0) throw new WorkloadException($"untraced run exited {code}: {run.ErrorText()}");
        return RunTimes.Of(run.ReadResult());
    }

    private static long LostEvents(string reportJson)
    {
        var report = Reporting.ReportJson.Deserialize(File.ReadAllText(reportJson));
        return report.Capture.LostEvents;
    }

    private static double Median(long[] values) => Median(values.Select(v => (double)v).ToArray());

    /// <summary>The middle value; the mean of the two middle values for an even count.</summary>
    public static double Median(double[] values)
    {
        var sorted = values.Order().ToArray();
        var mid = sorted.Length / 2;
        return sorted.Length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    }

    private static string Percent(double ratio) =>
        double.IsNaN(ratio) ? "n/a" : (ratio * 100).ToString("+0.0;-0.0;0.0", CultureInfo.InvariantCulture) + " %";

    /// <summary>"none,lock,all" or a subset.</summary>
    /// <summary>"none,lock,all" as sets, each once.</summary>
    /// <exception cref="ArgumentException">An unknown set, named in the message.</exception>
    public static IReadOnlyList<SyscallSet> ParseSets(string text) =>
        text.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)
            .Select(CaptureEventSet.Parse).Distinct().ToList();
}
