using System.CommandLine;
using System.Globalization;
using Spectre.Console;
using TraceLab.Cli.CommandLine;
using TraceLab.Cli.Sweeps;
using TraceLab.Sweeps;
using TraceLab.Sweeps.Calibration;
using TraceLab.Sweeps.Output;
using TraceLab.Sweeps.Verdicts;
using TraceLab.Workloads;

namespace TraceLab.Cli.Commands;

/// <summary>
/// `tracelab sweep WORKLOAD SWEEP` / `--param NAME --values LIST`: run every point of a sweep several times in an
/// interleaved order, then write sweep.csv, sweep.json, plots and report.md with the claim verdicts. `--resume DIR`
/// continues an interrupted sweep from its state.json.
/// </summary>
public sealed class SweepCommand(IAnsiConsole console)
{
    public sealed record Settings
    {
        public string? Workload { get; init; }
        /// <summary>Predefined sweep name or claim id; null with <see cref="Param"/> for an ad-hoc sweep.</summary>
        public string? Sweep { get; init; }
        public string? Param { get; init; }
        public string? Values { get; init; }
        public string? SeriesParam { get; init; }
        public string? SeriesValues { get; init; }
        public int Repeat { get; init; } = 3;
        public bool Trace { get; init; }
        public string? Out { get; init; }
        public bool Force { get; init; }
        /// <summary>Directory of an interrupted sweep to continue; the other settings then come from it.</summary>
        public string? Resume { get; init; }
        public IReadOnlyDictionary<string, string> Overrides { get; init; } = new Dictionary<string, string>();
        public int TimeoutSeconds { get; init; }
        public int? OrderSeed { get; init; }
    }

    private static readonly string[] SweepFiles = ["report.md", "sweep.csv", "sweep.json"];

    private readonly IAnsiConsole _console = console;

    public static Command Create(IAnsiConsole console)
    {
        var workload = new Argument<string?>("workload")
        {
            Description = "workload to sweep (see `tracelab scenarios`)",
            Arity = ArgumentArity.ZeroOrOne,
        };
        var sweep = new Argument<string?>("sweep")
        {
            Description = "predefined sweep name or claim id (see `tracelab sweeps`)",
            Arity = ArgumentArity.ZeroOrOne,
        };
        var param = new Option<string?>("--param") { Description = "parameter to sweep (x axis) for an ad-hoc sweep" };
        var values = new Option<string?>("--values")
        {
            Description = "its values, comma-separated; integer ranges like 1-8 expand",
        };
        var series = new Option<string?>("--series")
        {
            Description = "parameter that makes one series (plot line) per value, e.g. which",
        };
        var seriesValues = new Option<string?>("--series-values")
        {
            Description = "its values, comma-separated (e.g. cs,mutex)",
        };
        var repeat = new Option<int>("--repeat")
        {
            Description = "runs per point (verdicts need at least 3)",
            DefaultValueFactory = _ => 3,
        };
        var trace = new Option<bool>("--trace")
        {
            Description = "capture and analyze every run (trace.dat and report.json per run; needs root)",
        };
        var outDir = SharedOptions.Out("output directory (default: ./traces/sweep-WORKLOAD-SWEEP-TIME)");
        var force = SharedOptions.Force("write into an existing non-empty directory");
        var resume = new Option<string?>("--resume")
        {
            Description = "continue the interrupted sweep in this directory (its state.json)",
        };
        var timeout = SharedOptions.Timeout(
            "kill a run after this many seconds and record it as failed (0 = no limit)");
        var seed = new Option<int?>("--order-seed")
        {
            Description = "seed of the interleaved run order (default: random, recorded in sweep.json)",
        };
        var list = new Option<bool>("--list") { Description = "list the predefined sweeps and their claims" };
        var parameters = new WorkloadParameterOptions("fixed for every point: ");

        var command = new Command("sweep",
            "run a workload over a range of parameter values, repeated, with plots, report and claim verdicts")
        {
            workload, sweep, param, values, series, seriesValues, repeat, trace, outDir, force, resume, timeout, seed,
            list,
        };
        parameters.AddTo(command);
        CommandActions.Set(command, async (r, _) => r.GetValue(list)
            ? new SweepsCommand(console).Run()
            : await new SweepCommand(console).RunAsync(new Settings
            {
                Workload = r.GetValue(workload),
                Sweep = r.GetValue(sweep),
                Param = r.GetValue(param),
                Values = r.GetValue(values),
                SeriesParam = r.GetValue(series),
                SeriesValues = r.GetValue(seriesValues),
                Repeat = r.GetValue(repeat),
                Trace = r.GetValue(trace),
                Out = r.GetValue(outDir),
                Force = r.GetValue(force),
                Resume = r.GetValue(resume),
                Overrides = parameters.Overrides(r),
                TimeoutSeconds = r.GetValue(timeout),
                OrderSeed = r.GetValue(seed),
            }));
        return command;
    }

    public async Task<int> RunAsync(Settings s)
    {
        var (directory, state, definition, workload) = s.Resume is not null ? Resume(s) : Create(s);
        // Say what privilege or mount is missing before building anything.
        var backend = state.Traced ? CaptureBackends.ForThisMachine() : null;
        backend?.EnsureAvailable();
        var exe = new NativeWorkloadBuilder(RepositoryLayout.FindRoot()).EnsureBuilt(workload.Name);
        var timeout = TimeSpan.FromSeconds(s.TimeoutSeconds);
        IPointRunner runner = state.Traced
            ? new TracedPointRunner(workload, exe, definition.Name, definition.Claims, timeout, backend)
            : new UntracedPointRunner(workload, exe, timeout);

        var done = state.Runs.Count;
        _console.MarkupLine($"sweep [bold]{Markup.Escape(definition.Name)}[/] ({Markup.Escape(workload.Name)}: "
            + $"{Markup.Escape(definition.Title)}): " +
            $"{state.Points.Count} points × {state.Repeats} repeats = {state.Order.Count} "
                + $"runs{(done > 0 ? $", {done} already done" : "")}{(state.Traced ? ", traced" : "")} → "
                + $"{Markup.Escape(directory)}");

        bool complete;
        using (var interruption = new Interruption(hangUp: true))
        {
            complete = await Calibrate(_console, directory, state, definition.Calibration, runner, interruption.Token)
                && await RunWithProgress(directory, state, runner, interruption.Token);
        }

        var data = Data(definition, state, workload);
        var summary = SweepOutputs.Write(directory, data, state, MachineInfo.Current());
        Render(summary, directory);
        if (!complete)
        {
            _console.MarkupLine($"[yellow]interrupted after {state.Runs.Count} of {state.Order.Count} runs; the "
                + $"results so far are written. Resume: tracelab sweep --resume {Markup.Escape(directory)}[/]");
            return ExitCodes.Interrupted;
        }
        if (summary.RunsOk == 0) throw new WorkloadException(
            $"every run of the sweep failed (first: {summary.Failures.FirstOrDefault()}); see {directory}/report.md");
        return ExitCodes.Ok;
    }

    /// <summary>
    /// The runs with the definition's verdicts; parameter names in rules are canonicalized by the workload.
    /// </summary>
    public static SweepData Data(SweepDefinition definition, SweepState state, WorkloadDefinition workload) =>
        new(definition, state.SweepPoints(), state.Runs, state.Repeats)
        {
            Calibrated = SweepData.CalibratedOf(state),
            Canonical = (param, value) =>
            {
                try { return workload.FindParameter(param)?.Validate(value) ?? value; }
                catch (WorkloadException) { return value; }
            },
        };

    private static (string, SweepState, SweepDefinition, WorkloadDefinition) Create(Settings s)
    {
        if (s.Workload is null) throw new UsageException("sweep needs a workload (or --resume DIR)");
        var workload = FindWorkload(s.Workload);
        if (s.Repeat < 1) throw new UsageException("--repeat must be at least 1 (verdicts need 3)");
        SweepDefinition definition;
        List<string>? values = null, seriesValues = null;
        if (s.Sweep is not null)
        {
            if (s.Param is not null || s.Values is not null)
                throw new UsageException("give either a sweep name or --param/--values, not both");
            var names =
                string.Join(", ", PredefinedSweeps.All.Where(d => d.Workload == workload.Name).Select(d => d.Name));
            definition = PredefinedSweeps.Find(workload.Name, s.Sweep) ?? throw new UsageException(
                $"unknown sweep '{s.Sweep}' for {workload.Name}: valid sweeps are "
                    + $"{(names.Length > 0 ? names : "none")} (see tracelab sweeps)");
        }
        else
        {
            if (s.Param is null || s.Values is null) throw new UsageException(
                "sweep needs a sweep name (see tracelab sweeps) or --param NAME --values LIST");
            try
            {
                var isText = workload.FindParameter(s.Param)?.IsText == true;
                values = [.. CustomSweep.ParseList(s.Values, expandRanges: !isText)];
                if (s.SeriesValues is not null)
                    seriesValues = [.. CustomSweep.ParseList(
                        s.SeriesValues, expandRanges: workload.FindParameter(s.SeriesParam ?? "")?.IsText != true)];
                definition = CustomSweep.Create(workload.Name, s.Param, values, s.SeriesParam, seriesValues);
            }
            catch (SweepException ex) { throw new UsageException(ex.Message, ex); }
        }
        foreach (var p in definition.ParametersUsed)
        {
            if (workload.FindParameter(p) is null) throw new UsageException($"{workload.Name} has no parameter '{p}'");
            if (s.Overrides.ContainsKey(p))
                throw new UsageException($"--{p} is what this sweep varies; it cannot also be fixed");
        }

        IReadOnlyList<SweepPoint> points;
        var scenario = new Scenario("sweep", "", [], new Dictionary<string, string>());
        try { points = SweepPlan.Points(definition, s.Overrides, v => workload.Resolve(scenario, v)); }
        catch (WorkloadException ex) { throw new UsageException(ex.Message, ex); }
        // Before creating the output directory: say what privilege or mount tracing lacks.
        if (s.Trace) CaptureBackends.ForThisMachine().EnsureAvailable();

        var stamp = DateTime.Now.ToString("yyyyMMdd-HHmmss", CultureInfo.InvariantCulture);
        var output = OutputDirectory.Prepare(s.Out, $"sweep-{workload.Name}-{definition.Name}-{stamp}", s.Force);
        var seed = s.OrderSeed ?? Random.Shared.Next();
        var state = new SweepState
        {
            Sweep = definition.Name,
            Workload = workload.Name,
            Param = s.Sweep is null ? s.Param : null,
            Values = values,
            SeriesParam = s.Sweep is null ? s.SeriesParam : null,
            SeriesValues = seriesValues,
            Overrides = s.Overrides.ToDictionary(kv => kv.Key, kv => kv.Value, StringComparer.OrdinalIgnoreCase),
            Repeats = s.Repeat,
            Traced = s.Trace,
            OrderSeed = seed,
            Points = points.Select(p => new SweepPointState(
                p.Index, p.Series, p.X, p.Values.ToDictionary(kv => kv.Key, kv => kv.Value))).ToList(),
            Order = [.. SweepPlan.Order(points.Count, s.Repeat, seed)],
            StartedUtc = DateTimeOffset.UtcNow,
        };
        SweepStateStore.Save(output.Path, state);
        return (output.Path, state, definition, workload);
    }

    private static (string, SweepState, SweepDefinition, WorkloadDefinition) Resume(Settings s)
    {
        if (s.Workload is not null || s.Sweep is not null || s.Param is not null)
            throw new UsageException(
                "--resume takes the sweep from its state.json: give no workload, sweep or --param");
        var directory = Path.GetFullPath(s.Resume!);
        if (!Directory.Exists(directory)) throw new UsageException($"{directory}: no such directory");
        SweepState state;
        try { state = SweepStateStore.Load(directory); }
        catch (SweepException ex) { throw new UsageException(ex.Message, ex); }
        var workload = FindWorkload(state.Workload);
        SweepDefinition definition;
        try
        {
            definition = state.Sweep == CustomSweep.Name
                ? CustomSweep.Create(
                    state.Workload, state.Param ?? "", state.Values ?? [], state.SeriesParam, state.SeriesValues)
                : PredefinedSweeps.Find(state.Workload, state.Sweep)
                    ?? throw new SweepException($"{directory}: unknown sweep '{state.Sweep}' in state.json");
        }
        catch (SweepException ex) { throw new UsageException(ex.Message, ex); }
        return (directory, state, definition, workload);
    }

    private static WorkloadDefinition FindWorkload(string name) => WorkloadCatalog.Find(name)
        ?? throw new UsageException($"unknown workload '{name}': valid workloads are "
            + $"{string.Join(", ", WorkloadCatalog.All.Select(w => w.Name))}");

    /// <summary>
    /// Runs the sweep's calibration pilots if it needs them; false when interrupted (nothing is recorded).
    /// </summary>
    internal static async Task<bool> Calibrate(IAnsiConsole console, string directory, SweepState state,
        IterationCalibration? calibration, IPointRunner runner, CancellationToken token,
        Action<string, long, SweepRunRecord>? piloted = null)
    {
        if (!SweepCalibrator.Needed(state, calibration)) return true;
        var c = calibration!;
        var series = state.Points.Select(p => p.Series).Distinct().Count();
        console.MarkupLine(Markup.Escape(FormattableString.Invariant(
            $"calibrating {c.Parameter} for {series} series (every point ≥ {c.MinSeconds:0.##} s; ")
            + "docs/sweeps.md#calibration)"));
        try
        {
            await new SweepCalibrator(runner, directory) { Piloted = piloted }.CalibrateAsync(state, c, token);
        }
        catch (OperationCanceledException) when (token.IsCancellationRequested)
        {
            return false;
        }
        foreach (var r in state.Calibration!)
        {
            var pilots = r.Pilots.Where(p => p.Value == r.Pilots[^1].Value)
                .Select(p => p.Seconds.ToString("0.###", CultureInfo.InvariantCulture));
            console.MarkupLine(Markup.Escape(FormattableString.Invariant(
                $"  {r.Series}: {c.Parameter} {r.Value:#,0} (pilots at {r.Pilots[^1].Value:#,0}: ")
                + string.Join(", ", pilots) + " s)"));
        }
        return true;
    }

    /// <summary>One line per point of a calibrated sweep measured again (its median was under the minimum).</summary>
    internal static void SayReruns(IAnsiConsole console, IReadOnlyList<PointRerun> reruns,
        IReadOnlyList<SweepPoint> points)
    {
        foreach (var r in reruns)
        {
            var p = points[r.Point];
            console.MarkupLine(Markup.Escape(FormattableString.Invariant(
                $"  {p.Id} {p.Series} x={p.X}: median {r.MedianSeconds:0.###} s < {r.MinSeconds:0.##} s, ")
                + FormattableString.Invariant($"measured again with {r.Parameter} {r.FromValue:#,0} → ")
                + FormattableString.Invariant($"{r.ToValue:#,0} (docs/sweeps.md#calibration)")));
        }
    }

    private async Task<bool> RunWithProgress(
        string directory, SweepState state, IPointRunner runner, CancellationToken token)
    {
        var points = state.SweepPoints();
        string Describe(SweepPoint p) =>
            p.Series == SweepSeries.Single.Label ? $"{p.Id} x={p.X}" : $"{p.Id} {p.Series} x={p.X}";
        if (!_console.Profile.Capabilities.Interactive)
        {
            var plain = new SweepRunner(directory, state, runner)
            {
                Finished = (done, total, r) => _console.MarkupLine(Markup.Escape(
                    $"[{done}/{total}] {Describe(points[r.Point])} repeat {r.Repeat}: "
                        + $"{(r.Ok ? $"{r.ElapsedNs / 1e9:0.###} s" : "FAILED " + r.Error)}")),
                Rerunning = reruns => SayReruns(_console, reruns, points),
            };
            return await plain.RunAsync(token);
        }
        var complete = false;
        await _console.Progress()
            .Columns(new TaskDescriptionColumn(), new ProgressBarColumn(), new PercentageColumn(),
                new RemainingTimeColumn(), new ElapsedTimeColumn())
            .StartAsync(async ctx =>
            {
                var task = ctx.AddTask("sweep", maxValue: state.Order.Count);
                task.Value = state.Runs.Count;
                var runner2 = new SweepRunner(directory, state, runner)
                {
                    Starting = (done, total, p) => task.Description = Markup.Escape($"{done}/{total} {Describe(p)}"),
                    Finished = (done, _, r) =>
                    {
                        task.Value = done;
                        task.Description = Markup.Escape($"{done}/{state.Order.Count} runs");
                        if (!r.Ok)
                        {
                            var failed = $"{Describe(points[r.Point])} repeat {r.Repeat} failed: {r.Error}";
                            _console.MarkupLine($"[yellow]{Markup.Escape(failed)}[/]");
                        }
                    },
                    Rerunning = reruns =>
                    {
                        SayReruns(_console, reruns, points);
                        task.Value = state.Runs.Count;
                    },
                };
                complete = await runner2.RunAsync(token);
            });
        return complete;
    }

    private void Render(SweepSummary s, string directory)
    {
        if (s.Verdicts.Count > 0)
        {
            var table = new Table().Border(TableBorder.Simple).AddColumns("claim", "aspect", "outcome");
            foreach (var v in s.Verdicts)
            {
                var color = v.Outcome switch
                {
                    "reproduced" => "green",
                    "inverted" => "red",
                    "not reproduced" => "yellow",
                    _ => "grey"
                };
                table.AddRow(
                    Markup.Escape(v.Claim), Markup.Escape(v.Aspect), $"[{color}]{Markup.Escape(v.Outcome)}[/]");
            }
            _console.Write(table);
        }
        foreach (var w in s.Warnings) _console.MarkupLine($"[yellow]{Markup.Escape(w)}[/]");
        if (s.RunsFailed > 0) _console.MarkupLine($"[yellow]{s.RunsFailed} run(s) failed (listed in report.md)[/]");
        var files = SweepFiles.Concat(s.Plots);
        _console.MarkupLine(
            $"[bold]Files[/] {Markup.Escape(directory)}: {Markup.Escape(string.Join(", ", files))}, runs/");
    }
}
