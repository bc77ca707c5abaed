using System.Diagnostics;
using Spectre.Console;
using TraceLab.Cli.Sweeps;
using TraceLab.Sweeps;
using TraceLab.Sweeps.Calibration;
using TraceLab.Sweeps.Claims;
using TraceLab.Sweeps.Output;
using TraceLab.Workloads;

namespace TraceLab.Cli.Commands;

/// <summary>
/// `claims --run`: every predefined sweep the claims need, one sweep folder each under the results folder, with an
/// estimate before it starts and a progress line with the time left. Each folder is an ordinary sweep (state.json
/// saved after every run), so Ctrl-C loses only the run in flight and the next `--run` measures only what is missing.
/// With --trace every run is captured and analyzed as `sweep --trace` does (<see cref="TracedPointRunner"/>).
/// </summary>
public sealed class ClaimsRun(IAnsiConsole console, string directory, bool quick, TimeSpan timeout, bool traced = false)
{
    private readonly IAnsiConsole _console = console;
    private readonly string _directory = directory;
    private readonly bool _quick = quick;
    private readonly TimeSpan _timeout = timeout;
    private readonly bool _traced = traced;

    /// <summary>Tests: runs points without processes. Default: the native workload, traced or not.</summary>
    internal Func<WorkloadDefinition, IPointRunner>? RunnerFactory { get; init; }
    /// <summary>Tests: a subset of the sweeps. Default: every sweep a claim needs.</summary>
    internal IReadOnlyList<SweepDefinition>? Sweeps { get; init; }
    /// <summary>Tests: the order seed of new sweeps. Default: random, recorded in each state.json.</summary>
    internal int? OrderSeed { get; init; }

    private sealed record Job(SweepDefinition Definition, WorkloadDefinition Workload, string Directory,
        IReadOnlyList<SweepPoint> Points, SweepState? State);

    /// <returns>False when interrupted (Ctrl-C, SIGTERM, SIGHUP); every finished run is kept.</returns>
    public async Task<bool> RunAsync(CancellationToken token)
    {
        var jobs = Plan();
        var runners = Runners(jobs);
        var eta = new ClaimsEta();
        foreach (var j in jobs)
        {
            // Re-runs of short points are not known in advance: they are added when scheduled.
            var left = j.State is { } st ? st.Order.Count(o => !st.IsDone(o)) : j.Points.Count * ClaimsRunPlan.Repeats;
            var calibration = ClaimsRunPlan.Calibration(j.Definition, _quick);
            var extra = calibration is not null && (j.State is null || SweepCalibrator.Needed(j.State, calibration))
                ? ClaimsRunPlan.CalibrationSeconds(_quick) : 0;
            eta.Add(j.Definition.Name, left, NominalSeconds(j), extra);
        }
        var done = jobs.Sum(j => j.State?.Runs.Count ?? 0);
        var total = done + eta.RunsLeft;
        _console.MarkupLine(Markup.Escape(ClaimsCommand.I(
            $"claims --run{ClaimsRunPlan.Flags(_quick, _traced)}: {jobs.Count} sweeps, {total} runs ")
            + ClaimsCommand.I($"({ClaimsRunPlan.Repeats} repeats per point{(_traced ? ", traced" : "")})")
            + (done > 0 ? ClaimsCommand.I($", {done} already measured") : "")
            + $"; estimated {ClaimsEta.Format(eta.Remaining)} → {_directory}"));
        _console.MarkupLine(
            "[grey]Ctrl-C stops after keeping every finished run; run the same command again to continue.[/]");

        Directory.CreateDirectory(_directory);
        var log = ClaimsRunLog.Load(_directory);
        log.Machine = MachineInfo.Current();
        log.Quick = _quick;
        var progress = new ClaimsProgress(_console, total, done);
        return await progress.RunAsync(async report =>
        {
            foreach (var job in jobs)
            {
                if (token.IsCancellationRequested) return false;
                if (!await RunSweep(job, runners[job.Definition.Name], log, eta, progress, report, token))
                    return false;
            }
            return true;
        });
    }

    private double NominalSeconds(Job j)
    {
        // A resumed sweep's own runs say more than the nominal figure: their elapsed time plus process start-up.
        var ok = j.State?.Runs.Where(r => r.Ok).ToList() ?? [];
        if (ok.Count < 3) return ClaimsRunPlan.NominalSeconds(j.Definition, _quick, _traced);
        var seconds = ok.Average(r => r.ElapsedNs / 1e9) + 0.1;
        return _traced ? ClaimsRunPlan.Traced(seconds) : seconds;
    }

    /// <summary>Resolves every sweep's points; checks earlier results in the folder are of the same sweep.</summary>
    private List<Job> Plan()
    {
        var scenario = new Scenario("claims", "", [], new Dictionary<string, string>());
        var jobs = new List<Job>();
        foreach (var d in Sweeps ?? ClaimCatalog.Sweeps())
        {
            var workload = WorkloadCatalog.Find(d.Workload)
                ?? throw new SweepException($"unknown workload {d.Workload}");
            var points = SweepPlan.Points(d, ClaimsRunPlan.Overrides(d, _quick), v => workload.Resolve(scenario, v));
            var dir = Path.Combine(_directory, d.Name);
            SweepState? state = null;
            if (File.Exists(Path.Combine(dir, SweepStateStore.FileName)))
            {
                state = SweepStateStore.Load(dir);
                if (ClaimsRunPlan.Mismatch(state, d, points, _traced) is { } why)
                    throw new SweepException(
                        $"{dir} holds other measurements ({why}): move it away to measure the claims again");
            }
            else if (Directory.Exists(dir) && Directory.EnumerateFileSystemEntries(dir).Any())
            {
                throw new SweepException(
                    $"{dir} exists without {SweepStateStore.FileName}: move it away, it is not a claims sweep");
            }
            jobs.Add(new Job(d, workload, dir, points, state));
        }
        return jobs;
    }

    /// <summary>One point runner per sweep (a traced run's report names its sweep and claims).</summary>
    private Dictionary<string, IPointRunner> Runners(IEnumerable<Job> jobs)
    {
        var result = new Dictionary<string, IPointRunner>();
        NativeWorkloadBuilder? builder = null;
        var executables = new Dictionary<string, string>();
        var backend = _traced && RunnerFactory is null ? CaptureBackends.ForThisMachine() : null;
        // Say what privilege or mount tracing lacks before building or measuring anything.
        backend?.EnsureAvailable();
        foreach (var (d, w) in jobs.Select(j => (j.Definition, j.Workload)))
        {
            if (RunnerFactory is not null)
            {
                result[d.Name] = RunnerFactory(w);
                continue;
            }
            builder ??= new NativeWorkloadBuilder(RepositoryLayout.FindRoot());
            if (!executables.TryGetValue(w.Name, out var exe)) executables[w.Name] = exe = builder.EnsureBuilt(w.Name);
            result[d.Name] = backend is not null
                // 696 trace files would take tens of GB: each run keeps its report, not its trace.
                ? new TracedPointRunner(w, exe, d.Name, d.Claims, _timeout, backend) { KeepTraceFile = false }
                : new UntracedPointRunner(w, exe, _timeout);
        }
        return result;
    }

    private async Task<bool> RunSweep(Job job, IPointRunner runner, ClaimsRunLog log, ClaimsEta eta,
        ClaimsProgress progress, Action<string, string> report, CancellationToken token)
    {
        var d = job.Definition;
        var state = job.State ?? NewState(job);
        // Done, unless a calibrated point is still under its minimum (e.g. results of a version without re-runs).
        if (state.Order.All(state.IsDone) && !ShortPointReruns.Pending(state))
        {
            if (!File.Exists(Path.Combine(job.Directory, "sweep.json"))) WriteOutputs(job, state, log);
            return true;
        }
        eta.Started(d.Name);
        var window = new LoadWindow { Sweep = d.Name, StartedUtc = DateTimeOffset.UtcNow };
        log.Windows.Add(window);
        var ticks = MachineLoad.ReadCpuTicks();
        long ownNs = 0;
        var recorded = 0;
        bool finished;
        using (new LoadSampler(window))
        {
            var calibrated = await SweepCommand.Calibrate(_console, job.Directory, state,
                ClaimsRunPlan.Calibration(d, _quick), runner, token, (_, _, r) => ownNs += r.UserNs + r.SystemNs);
            var clock = Stopwatch.StartNew();
            var points = state.SweepPoints();
            var runnerOfSweep = new SweepRunner(job.Directory, state, runner)
            {
                Starting = (_, _, _) => clock.Restart(),
                Finished = (doneInSweep, totalInSweep, r) =>
                {
                    recorded++;
                    if (r.Ok) ownNs += r.UserNs + r.SystemNs;
                    eta.Finished(d.Name, clock.Elapsed.TotalSeconds);
                    var p = points[r.Point];
                    var series = p.Series == SweepSeries.Single.Label ? "" : p.Series + " ";
                    var left = ClaimsEta.Format(eta.Remaining);
                    report(ClaimsCommand.I($"{d.Name} {doneInSweep}/{totalInSweep}, ETA {left}"),
                        ClaimsCommand.I($"{p.Id} {series}x={p.X} repeat {r.Repeat} ")
                        + (r.Ok ? ClaimsCommand.I($"{r.ElapsedNs / 1e9:0.###} s") : "FAILED " + r.Error));
                },
                Rerunning = reruns =>
                {
                    var runs = reruns.Sum(x => state.Order.Count(o => o.Point == x.Point));
                    progress.Add(runs);
                    eta.More(d.Name, runs);
                    SweepCommand.SayReruns(_console, reruns, points);
                },
            };
            finished = calibrated && await runnerOfSweep.RunAsync(token);
        }
        window.FinishedUtc = DateTimeOffset.UtcNow;
        window.Runs = recorded;
        window.OwnCpuNs = ownNs;
        window.Interrupted = !finished;
        if (ticks is { } t0 && MachineLoad.ReadCpuTicks() is { } t1)
        {
            window.BusyTicks = t1.Busy - t0.Busy;
            window.TotalTicks = t1.Total - t0.Total;
        }
        log.Save(_directory);
        WriteOutputs(job, state, log);
        return finished && !token.IsCancellationRequested;
    }

    private SweepState NewState(Job job)
    {
        Directory.CreateDirectory(job.Directory);
        var seed = OrderSeed ?? Random.Shared.Next();
        var state = new SweepState
        {
            Sweep = job.Definition.Name,
            Workload = job.Workload.Name,
            Overrides = ClaimsRunPlan.Overrides(job.Definition, _quick)
                .ToDictionary(kv => kv.Key, kv => kv.Value, StringComparer.OrdinalIgnoreCase),
            Repeats = ClaimsRunPlan.Repeats,
            Traced = _traced,
            OrderSeed = seed,
            Points = job.Points
                .Select(p => new SweepPointState(p.Index, p.Series, p.X,
                    p.Values.ToDictionary(kv => kv.Key, kv => kv.Value)))
                .ToList(),
            Order = [.. SweepPlan.Order(job.Points.Count, ClaimsRunPlan.Repeats, seed)],
            StartedUtc = DateTimeOffset.UtcNow,
        };
        SweepStateStore.Save(job.Directory, state);
        return state;
    }

    /// <summary>The sweep's own report.md, sweep.csv and sweep.json, as `tracelab sweep` writes them.</summary>
    private static void WriteOutputs(Job job, SweepState state, ClaimsRunLog log)
    {
        var machine = log.Machine ?? MachineInfo.Current();
        var data = ClaimsReportBuilder.Data(job.Definition, state, machine.Cpus);
        SweepOutputs.Write(job.Directory, data, state, machine);
    }

    /// <summary>Samples the 1-minute load average into the window every 10 s while a sweep runs.</summary>
    private sealed class LoadSampler : IDisposable
    {
        private readonly Timer _timer;

        public LoadSampler(LoadWindow window)
        {
            _timer = new Timer(_ =>
            {
                if (MachineLoad.ReadLoadAverage() is { } l)
                    lock (window.LoadAverages) window.LoadAverages.Add(l);
            }, null, TimeSpan.Zero, TimeSpan.FromSeconds(10));
        }

        public void Dispose()
        {
            // Wait for a callback in flight, so the window is not written while a sample is being added.
            using var done = new ManualResetEvent(false);
            _timer.Dispose(done);
            done.WaitOne();
        }
    }
}
