using System.Globalization;
using System.Text.RegularExpressions;
using Spectre.Console;
using TraceLab.Analyzers;
using TraceLab.Analyzers.Timeline;
using TraceLab.Capture.Linux;
using TraceLab.Cli.CommandLine;
using TraceLab.Core.Capture;
using TraceLab.Formats.StackJoin;
using TraceLab.Reporting;
using TraceLab.Workloads.Targets;

namespace TraceLab.Cli.Commands;

/// <summary>What `tracelab trace` captures besides a built-in workload.</summary>
public enum TraceTargetMode
{
    /// <summary>`-- PROGRAM ARGS`: started under capture, followed with its children until all exit.</summary>
    Program,
    /// <summary>`--pid PID[,PID...]`: running processes, until they exit, the duration ends or Ctrl-C.</summary>
    Attach,
    /// <summary>`--system`: every process, until the duration ends or Ctrl-C.</summary>
    System,
}

/// <summary>
/// `tracelab trace -- PROGRAM`, `--pid`, `--system`: the same capture path as the built-in workloads
/// (<see cref="TracedCapture"/>), with a different producer of processes. TraceLab brackets the target with
/// TRACELAB_TARGET_BEGIN / _PIDS / _END markers, so the region is the program's run (or the attach) and
/// `tracelab analyze` finds the target pids in the trace alone.
/// Exit code: the program's own (128 + signal when a signal ended it) when the capture succeeded; 1 when tracing
/// failed; 127 when the program cannot be started; 2 for a bad --pid/--user; 130 when Ctrl-C stopped a program
/// run early (attach and system runs end normally on Ctrl-C: exit 0).
/// </summary>
public sealed partial class TraceTargetCommand
{
    public sealed record Settings(
        TraceTargetMode Mode, IReadOnlyList<string> Command, string? Pids, string? User, double DurationSeconds,
        string? Out, bool Force, int BufferKb, SyscallSet Syscalls, AnalysisSelection? Analyses = null,
        TimelineWindow? Timeline = null, int Top = SystemOverview.DefaultTop)
    {
        /// <summary>Processes the report leaves out (`--exclude-pid`), their cost said once.</summary>
        public IReadOnlyList<int> ExcludePids { get; init; } = [];
        /// <summary>
        /// `--stacks` / `--call-graph`: record call stacks beside the trace (<see cref="PerfStackRecorder"/>), with
        /// user stacks walked this way; null: none.
        /// </summary>
        public UserStackWalk? Stacks { get; init; }
    }

    private readonly IAnsiConsole _console;
    private readonly ICaptureBackend _backend;
    private readonly TimeProvider _time;

    /// <param name="console">Where TraceLab's own output goes; with `--` the CLI passes stderr, so the program's
    /// stdout stays the program's alone.</param>
    /// <param name="backend">The capture backend; the one of this OS when null.</param>
    /// <param name="time">The clock that ends a `--duration`; the system's when null (tests pass one they advance,
    /// so that no test depends on how fast a loaded machine runs).</param>
    public TraceTargetCommand(IAnsiConsole console, ICaptureBackend? backend = null, TimeProvider? time = null)
    {
        _console = console;
        _backend = backend ?? CaptureBackends.ForThisMachine();
        _time = time ?? TimeProvider.System;
    }

    public async Task<int> RunAsync(Settings s)
    {
        try
        {
            return s.Mode switch
            {
                TraceTargetMode.Program => await RunProgram(s),
                TraceTargetMode.Attach => await RunAttach(s),
                _ => await RunSystem(s),
            };
        }
        catch (TargetException ex)
        {
            Console.Error.WriteLine($"tracelab: {ex.Message}");
            return ex.ExitCode;
        }
    }

    private async Task<int> RunProgram(Settings s)
    {
        if (s.Command.Count == 0) throw new UsageException("no program given after --");
        // Like a shell: a program that cannot be run is reported before any capture is set up (exit 127).
        var exe = TargetProgram.Resolve(s.Command[0]);
        var user = s.User is null ? null : TargetUser.Find(s.User);
        _backend.EnsureAvailable();
        if (s.Stacks is not null) TracedCapture.EnsureStacksAvailable(_backend);
        var name = SafeName(Path.GetFileName(exe));
        var stamp = TracedCapture.Stamp();
        var output = OutputDirectory.Prepare(s.Out, $"{name}-{stamp}", s.Force);

        using var interruption = new Interruption();
        using var capture = StartCapture(name, stamp, output, s);
        using var stop = CancellationTokenSource.CreateLinkedTokenSource(interruption.Token, capture.Session.Failed);
        var started = DateTimeOffset.UtcNow;
        // Said before the program starts: console calls while a child shares the terminal can block until it exits.
        var commandLine = ShellWords.Join(s.Command);
        _console.MarkupLine($"[grey]tracing {Markup.Escape(commandLine)}; " +
            "it and its children are followed until all exit[/]");
        var markers = new TargetMarkers(capture.Session);
        markers.Begin();
        using var program = TargetProgram.Start(exe, s.Command.Skip(1).ToList(), capture.Session.MarkerPath, user);
        markers.Pids([program.Pid]);
        int exitCode;
        var partial = false;
        try
        {
            exitCode = await program.WaitForTreeAsync(stop.Token, (pid, tids) => markers.Threads([(pid, tids)]));
        }
        catch (OperationCanceledException)
        {
            capture.Session.ThrowIfFailed();
            if (capture.Session.Failed.IsCancellationRequested)
                throw new IOException("the capture failed while the program ran");
            // Ctrl-C reached the program too (same terminal process group); TraceLab never kills it.
            partial = true;
            exitCode = program.HasExited ? program.ExitCode : ExitCodes.Interrupted;
        }
        markers.End();
        if (partial)
            _console.MarkupLine("[yellow]interrupted: capture stopped before the program and its children ended; " +
                "keeping the partial trace (the program was not killed)[/]");
        var run = RunSection(name, commandLine, exitCode, started, "program",
            partial ? null : program.Usage);
        Finish(capture, output, run, partial, s, program.Pid);
        return partial ? ExitCodes.Interrupted : exitCode;
    }

    private async Task<int> RunAttach(Settings s)
    {
        var targets = AttachedProcesses.Find(s.Pids ?? "");
        _backend.EnsureAvailable();
        if (s.Stacks is not null) TracedCapture.EnsureStacksAvailable(_backend);
        var stamp = TracedCapture.Stamp();
        var label = "pid-" + string.Join('-', targets.Pids);
        var output = OutputDirectory.Prepare(s.Out, $"{SafeName(label)}-{stamp}", s.Force);

        using var interruption = new Interruption();
        using var capture = StartCapture("attach", stamp, output, s);
        var started = DateTimeOffset.UtcNow;
        var markers = new TargetMarkers(capture.Session);
        markers.Begin();
        // Tracing is on: a process that is gone now was gone before TraceLab could see it run.
        targets.EnsureStillRunning();
        markers.Pids(targets.Pids);
        markers.ThreadsOf(targets.Pids);
        markers.Starts(ProcStarts.Of(targets.Pids));
        _console.MarkupLine($"[grey]attached to pid {string.Join(", ", targets.Pids)}: tracing until they exit" +
            (s.DurationSeconds > 0 ? $", {s.DurationSeconds:0.###} s pass" : "") + " or Ctrl-C[/]");
        await WaitForEnd(targets.WaitAllExitedAsync, s.DurationSeconds, interruption, capture.Session);
        markers.ThreadsOf(targets.Pids);
        markers.End();
        var run = RunSection(label, $"--pid {string.Join(',', targets.Pids)}", 0, started, "attach");
        Finish(capture, output, run, partial: false, s, targets.Pids[0]);
        return ExitCodes.Ok;
    }

    private async Task<int> RunSystem(Settings s)
    {
        _backend.EnsureAvailable();
        if (s.Stacks is not null) TracedCapture.EnsureStacksAvailable(_backend);
        var stamp = TracedCapture.Stamp();
        var output = OutputDirectory.Prepare(s.Out, $"system-{stamp}", s.Force);
        using var interruption = new Interruption();
        using var capture = StartCapture("system", stamp, output, s);
        var started = DateTimeOffset.UtcNow;
        var markers = new TargetMarkers(capture.Session);
        markers.Begin();
        markers.Threads(ProcThreads.MultiThreaded());
        markers.Starts(ProcStarts.Of(ProcStat.All()));
        _console.MarkupLine("[grey]tracing the whole system: " +
            (s.DurationSeconds > 0 ? $"{s.DurationSeconds:0.###} s or Ctrl-C[/]" : "until Ctrl-C[/]"));
        await WaitForEnd(token => Task.Delay(Timeout.Infinite, token), s.DurationSeconds, interruption,
            capture.Session);
        markers.Threads(ProcThreads.MultiThreaded());
        markers.End();
        var run = RunSection("system", "--system", 0, started, "system");
        Finish(capture, output, run, partial: false, s, pid: null);
        return ExitCodes.Ok;
    }

    private TracedCapture StartCapture(string name, string stamp, OutputDirectory output, Settings s)
    {
        var capture = TracedCapture.Start(_backend, name, stamp, output, s.BufferKb, s.Syscalls, s.Stacks);
        foreach (var notice in capture.Notices) _console.MarkupLine($"[yellow]{Markup.Escape(notice)}[/]");
        foreach (var missing in capture.Session.MissingEvents)
            _console.MarkupLine($"[yellow]warning: this kernel has no {Markup.Escape(missing)} event; skipped[/]");
        return capture;
    }

    /// <summary>
    /// Until <paramref name="ended"/> completes, the duration passes or Ctrl-C: all three end the run normally.
    /// </summary>
    private async Task WaitForEnd(Func<CancellationToken, Task> ended, double durationSeconds,
        Interruption interruption, ICaptureSession session)
    {
        using var duration = durationSeconds > 0
            ? new CancellationTokenSource(TimeSpan.FromSeconds(durationSeconds), _time)
            : new CancellationTokenSource();
        using var stop =
            CancellationTokenSource.CreateLinkedTokenSource(interruption.Token, session.Failed, duration.Token);
        try
        {
            await ended(stop.Token);
        }
        catch (OperationCanceledException)
        {
        }
        session.ThrowIfFailed();
        if (session.Failed.IsCancellationRequested) throw new IOException("the capture failed while tracing");
    }

    private void Finish(TracedCapture capture, OutputDirectory output, RunSection run, bool partial, Settings s,
        int? pid)
    {
        // With a marker file the trace names its own targets (all --pid processes); ETW has none: say which.
        var chosen = capture.Session.MarkerPath is null ? pid : null;
        var (report, _, traceFile) =
            capture.Finish(
                run, partial, s.Analyses ?? AnalysisSelection.All, s.Timeline ?? TimelineWindow.Default, chosen,
                s.Top, focusTimeline: s.Timeline is null, excludePids: s.ExcludePids);
        TerminalReport.Render(_console, report);
        ProcessesTerminal.Render(_console, report, s.Mode == TraceTargetMode.System);
        var files = new[]
            {
                _backend.TraceFileName, Path.GetFileName(StackFile.PathFor(traceFile)), "report.md", "report.json",
                "report.html",
            }
            .Where(f => File.Exists(output.File(f))).Concat(ReportFiles.ChartsIn(output));
        _console.MarkupLine($"[bold]Files[/] {Markup.Escape(output.Path)}: {string.Join(", ", files)}");
        _console.MarkupLine($"[grey]{Markup.Escape(_backend.OpenHint(traceFile))}[/]");
    }

    private static RunSection RunSection(string name, string command, int exitCode, DateTimeOffset started,
        string mode, ProgramUsage? usage = null) => new()
        {
            Workload = name,
            Parameters = new Dictionary<string, string> { ["mode"] = mode },
            Command = command,
            ExitCode = exitCode,
            StartedUtc = started,
            ElapsedNs = usage?.ElapsedNs,
            Rusage = usage?.Rusage,
        };

    /// <summary>A name usable in a directory and a tracefs instance name: letters, digits, '.', '_' and '-'.</summary>
    internal static string SafeName(string text)
    {
        var safe = Unsafe().Replace(text, "_");
        return safe.Length == 0 ? "program" : safe.Length > 40 ? safe[..40] : safe;
    }

    [GeneratedRegex("[^A-Za-z0-9._-]")]
    private static partial Regex Unsafe();
}

/// <summary>
/// Writes TraceLab's own markers into the capture (TRACELAB_TARGET_*, TRACELAB_SELF_PIDS: tracefs trace_marker, ETW
/// marker provider events) and, on tracefs, the /proc listings of threads and process starts (an ETW trace's thread
/// events state those itself).
/// </summary>
internal sealed class TargetMarkers(ICaptureSession session)
{
    private readonly string? markerPath = session.MarkerPath;

    public void Begin() => Write(MeasuredRegion.TargetBeginMarker);

    public void Pids(IEnumerable<int> pids) =>
        Write(MeasuredRegion.TargetPidsMarker +
            string.Join(',', pids.Select(p => p.ToString(CultureInfo.InvariantCulture))));

    public void End() => Write(MeasuredRegion.TargetEndMarker);

    /// <summary>
    /// TRACELAB_SELF_PIDS and the listing of TraceLab's own threads: a report on this trace leaves TraceLab's
    /// processes out and shows their cost once (docs/metrics.md#self-exclusion). Written as the capture starts, so
    /// threads TraceLab creates later are its own through their fork events.
    /// </summary>
    public void Self(IEnumerable<int> helperPids)
    {
        var self = Environment.ProcessId;
        Write(MeasuredRegion.SelfPidsMarker + string.Join(',',
            new[] { self }.Concat(helperPids).Select(p => p.ToString(CultureInfo.InvariantCulture))));
        ThreadsOf([self]);
    }

    /// <summary>
    /// TRACELAB_THREADS lines: which process each thread belongs to, for threads whose creation the trace does not
    /// show (they existed before the capture). Chunked: the kernel truncates a trace_marker write at about 4 KiB.
    /// </summary>
    public void Threads(IEnumerable<(int Pid, IReadOnlyList<int> Tids)> processes)
    {
        if (markerPath is null) return;
        foreach (var (pid, tids) in processes)
            foreach (var chunk in tids.Chunk(100))
                Write(MeasuredRegion.ThreadsMarker + pid.ToString(CultureInfo.InvariantCulture) + " " +
                    string.Join(',', chunk.Select(t => t.ToString(CultureInfo.InvariantCulture))));
    }

    /// <summary>TRACELAB_PROCESS_STARTS lines: when processes older than the capture started (trace clock).</summary>
    public void Starts(IEnumerable<(int Pid, long StartNs)> starts)
    {
        if (markerPath is null) return;
        foreach (var chunk in starts.Chunk(100))
            Write(MeasuredRegion.ProcessStartsMarker + string.Join(',', chunk.Select(s =>
                s.Pid.ToString(CultureInfo.InvariantCulture) + "="
                    + s.StartNs.ToString(CultureInfo.InvariantCulture))));
    }

    public void ThreadsOf(IEnumerable<int> pids) =>
        Threads(pids.Select(p => (p, ProcThreads.Of(p))).Where(p => p.Item2.Count > 0));

    // Without the marker the region is the whole trace; the capture itself is unaffected.
    private void Write(string text) => session.WriteMarker(text);
}
