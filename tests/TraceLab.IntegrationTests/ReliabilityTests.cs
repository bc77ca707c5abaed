using System.Collections.Concurrent;
using System.Diagnostics;
using Spectre.Console;
using TraceLab.Capture.Linux;
using TraceLab.Cli;
using TraceLab.Cli.Commands;
using TraceLab.Formats.TraceDat;
using TraceLab.Reporting;
using TraceLab.Workloads;

namespace TraceLab.IntegrationTests;

/// <summary>
/// Issue "Reliability: clean up after every failure": real captures that are killed, run side by side, hang, or
/// meet an unwritable or full disk. After each, no TraceLab instance may be left and the global tracing state must
/// be as it was.
/// </summary>
public sealed class ReliabilityTests
{
    private static readonly TimeSpan ChildDeadline = TimeSpan.FromSeconds(90);

    [TracingFact]
    public void Killed_run_is_cleaned_up_and_reported_by_the_next_run_which_leaves_other_instances_alone()
    {
        var before = GlobalTracingState.Read();
        var suffix = Guid.NewGuid().ToString("N")[..8];
        var foreign = $"not-tracelab-{suffix}";
        // pid 1 is always alive: this is what a concurrently running TraceLab's instance looks like.
        var live = TracefsInstance.NameFor(1, $"reliability-{suffix}");
        using var killedOut = new TempDirectory("tracelab-killed");
        using var nextOut = new TempDirectory("tracelab-next");
        Directory.CreateDirectory(Instances.PathOf(foreign));
        Directory.CreateDirectory(Instances.PathOf(live));
        var workloadPid = 0;
        try
        {
            string stale;
            using (var killed = TraceLabProcess.Start(
                "trace", "timemutex", "mutex", "--iterations", "10000000", "--out", killedOut.Path, "--force"))
            {
                stale = Processes.WaitFor(() =>
                {
                    if (killed.HasExited) Assert.Fail($"tracelab exited early ({killed.ExitCode}): {killed.Stderr}");
                    var mine = Instances.OwnedBy(killed.Pid).SingleOrDefault();
                    if (mine is null) return null;
                    // The instance directory shows up before tracefs has populated it: a missing file means "not yet".
                    try
                    {
                        return File.ReadAllText(Path.Combine(Instances.PathOf(mine), "tracing_on")).Trim() == "1"
                        ? mine : null;
                    }
                    catch (Exception ex) when (ex is FileNotFoundException or DirectoryNotFoundException)
                    {
                        return null;
                    }
                }, ChildDeadline, "the capture to start");
                workloadPid = Processes.WaitFor(() => Processes.ChildrenOf(killed.Pid)
                    .Find(p => Processes.Comm(p) == "timemutex") is var p and > 0 ? p.ToString() : null,
                    TimeSpan.FromSeconds(10), "the workload to start") is var found ? int.Parse(found) : 0;
                // The capture guard would clean up at once (GuardKillTests): kill it first, as a `kill -9` of the
                // whole group would, so the next run's stale-instance sweep is what is tested here.
                foreach (var guard in Processes.ChildrenOf(killed.Pid).Where(p => Processes.Comm(p) == "sh"))
                {
                    Processes.Kill(guard);
                    Processes.WaitUntilGone(guard, TimeSpan.FromSeconds(5));
                }
                killed.SigKill();
            }

            // The orphaned workload still writes markers into the dead run's instance, so it cannot go yet: say who
            // holds it.
            Assert.True(Processes.IsAlive(workloadPid), "the workload died with TraceLab; this test expects an orphan");
            var busy = TracefsInstance.RemoveStale(Tracefs.Locate());
            Assert.DoesNotContain(stale, busy.Removed);
            Assert.Contains(busy.Kept, line => line.Contains(stale, StringComparison.Ordinal)
                && line.Contains($"pid {workloadPid} (timemutex)", StringComparison.Ordinal));
            Assert.True(Directory.Exists(Instances.PathOf(stale)));

            Processes.Kill(workloadPid);
            Processes.WaitUntilGone(workloadPid, TimeSpan.FromSeconds(5));

            // Any TraceLab run on this machine may remove the instance from here on, so say so if one beat us to it.
            var staleBeforeNextRun = Directory.Exists(Instances.PathOf(stale));
            var console = new StringWriter();
            var code = RunInProcess(console, "mutex", nextOut.Path, ("iterations", "2000"));
            Assert.Equal(ExitCodes.Ok, code);
            var notice = $"removed stale tracefs instance {stale} left by a TraceLab run that died";
            Assert.True(console.ToString().Contains(notice, StringComparison.Ordinal),
                $"no stale-instance notice (instance present before the run: {staleBeforeNextRun}); terminal "
                    + $"output:\n{console}");
            var report = ReportJson.Deserialize(File.ReadAllText(Path.Combine(nextOut.Path, "report.json")));
            Assert.Contains(notice, report.Warnings);
            Assert.Contains(
                notice, File.ReadAllText(Path.Combine(nextOut.Path, "report.md")), StringComparison.Ordinal);

            Assert.False(Directory.Exists(Instances.PathOf(stale)));
            Assert.True(Directory.Exists(Instances.PathOf(foreign)), "a foreign instance was removed");
            Assert.True(Directory.Exists(Instances.PathOf(live)), "the instance of a live TraceLab was removed");
            Assert.Empty(Instances.OwnedBy(Environment.ProcessId));
            Assert.Equal(before, GlobalTracingState.Read());
        }
        finally
        {
            if (workloadPid > 0) Processes.Kill(workloadPid);
            Instances.RemoveTestInstance(foreign);
            Instances.RemoveTestInstance(live);
        }
    }

    [TracingFact]
    public async Task Two_runs_at_once_use_separate_instances_and_each_reports_only_its_own_workload()
    {
        var before = GlobalTracingState.Read();
        using var outA = new TempDirectory("tracelab-concurrent-a");
        using var outB = new TempDirectory("tracelab-concurrent-b");
        var seen = new ConcurrentDictionary<string, byte>();
        var mostAtOnce = 0;
        using var stopWatching = new CancellationTokenSource();
        // Dedicated threads: the runs block while they wait, and a starved thread pool would leave gaps in the watch.
        var watcher = Task.Factory.StartNew(() =>
        {
            while (!stopWatching.IsCancellationRequested)
            {
                var now = Instances.OwnedBy(Environment.ProcessId);
                foreach (var n in now) seen.TryAdd(n, 0);
                mostAtOnce = Math.Max(mostAtOnce, now.Count);
                Thread.Sleep(10);
            }
        }, TaskCreationOptions.LongRunning);

        // A: one thread, ~2.5 s of CPU work and few events; B starts once A captures and, with the other CPU free,
        // runs inside A's capture.
        var a = Task.Factory.StartNew(() => RunInProcess(TextWriter.Null, "cs", outA.Path,
            ("depth", "0"), ("threads", "1"), ("delay", "10000"), ("iterations", "200000")),
                TaskCreationOptions.LongRunning);
        Processes.WaitFor(() => seen.IsEmpty ? null : "", TimeSpan.FromSeconds(60), "run A's instance");
        var b = Task.Factory.StartNew(() => RunInProcess(TextWriter.Null, "mutex", outB.Path, ("iterations", "5000")),
            TaskCreationOptions.LongRunning);
        var codes = await Task.WhenAll(a, b);
        await stopWatching.CancelAsync();
        await watcher;

        Assert.Equal([ExitCodes.Ok, ExitCodes.Ok], codes);
        Assert.Equal(2, seen.Count);
        Assert.True(
            mostAtOnce == 2, "the two runs never captured at the same time (run B started too late to overlap A)");
        var (reportA, workloadA) = Load(outA.Path);
        var (reportB, workloadB) = Load(outB.Path);
        Assert.NotEqual(workloadA.Pid, workloadB.Pid);
        AssertOnlyOwnThreads(reportA, workloadA, 1);
        AssertOnlyOwnThreads(reportB, workloadB, 4);
        Assert.Empty(Instances.OwnedBy(Environment.ProcessId));
        Assert.Equal(before, GlobalTracingState.Read());

        static (RunReport, WorkloadResult) Load(string dir) =>
            (ReportJson.Deserialize(File.ReadAllText(Path.Combine(dir, "report.json"))),
             WorkloadResult.Parse(File.ReadAllText(Path.Combine(dir, "workload.json")), "workload.json"));

        static void AssertOnlyOwnThreads(RunReport report, WorkloadResult workload, int workers)
        {
            var own = workload.Threads.Select(t => t.Tid).Append(workload.Pid).ToHashSet();
            Assert.Equal(workers, workload.Threads.Count);
            Assert.Equal(workload.Pid, report.Process?.Pid);
            Assert.All(report.Threads, t => Assert.Contains(t.Tid, own));
            Assert.All(workload.Threads, t => Assert.Contains(report.Threads, r => r.Tid == t.Tid));
            // Each run's region comes from its own workload's markers, so the other's markers never reached its buffer.
            Assert.Equal("markers", report.Region.Source);
            Assert.InRange(report.Region.BeginNs, workload.BeginNs - 1_000_000, workload.BeginNs);
            Assert.InRange(report.Region.EndNs, workload.EndNs, workload.EndNs + 1_000_000);
        }
    }

    [TracingFact]
    public void Timeout_kills_the_hung_workload_and_fails_in_one_line_keeping_the_partial_trace()
    {
        var before = GlobalTracingState.Read();
        using var dir = new TempDirectory("tracelab-timeout");
        var clock = Stopwatch.StartNew();
        using var run = TraceLabProcess.Run(ChildDeadline,
            "trace", "timemutex", "mutex", "--iterations", "100000000", "--timeout", "2", "--out", dir.Path, "--force");

        Assert.Equal(ExitCodes.Failure, run.ExitCode);
        var line = run.SingleErrorLine();
        Assert.Contains("timed out after 2 s", line, StringComparison.Ordinal);
        Assert.Contains(dir.Path, line, StringComparison.Ordinal);
        Assert.True(File.Exists(dir.File("trace.dat")));
        var report = ReportJson.Deserialize(File.ReadAllText(dir.File("report.json")));
        Assert.True(report.Capture.Partial);
        Assert.Contains("PARTIAL", File.ReadAllText(dir.File("report.md")), StringComparison.Ordinal);
        Assert.True(report.Capture.SwitchEvents > 0, "the partial trace is empty");
        Assert.False(File.Exists(dir.File("workload.json")), "a killed workload's result was presented as complete");
        Assert.Empty(Directory.GetFiles(dir.Path, ".*"));
        var workloadPid = report.Process!.Pid;
        Assert.False(Processes.IsAlive(workloadPid), $"the timed-out workload {workloadPid} still runs");
        Assert.Empty(Instances.OwnedBy(run.Pid));
        Assert.Equal(before, GlobalTracingState.Read());
        Assert.True(clock.Elapsed < TimeSpan.FromSeconds(30), $"a 2 s timeout took {clock.Elapsed.TotalSeconds:0} s");
    }

    [LinuxFact]
    [System.Runtime.Versioning.SupportedOSPlatform("linux")]
    public async Task Stopping_a_workload_kills_its_whole_process_tree()
    {
        using var dir = new TempDirectory("tracelab-tree");
        // A stand-in for a hung workload with a child and a grandchild; it ignores TraceLab's arguments.
        var script = dir.File("hang.sh");
        var pids = dir.File("pids");
        File.WriteAllText(
            script, $"#!/bin/sh\n(sleep 300 & echo $! >> '{pids}'; wait) &\nsleep 300 &\necho $! >> '{pids}'\nwait\n");
        File.SetUnixFileMode(script, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        var tree = new List<int>();
        try
        {
            using var cancel = new CancellationTokenSource();
            using (var run = WorkloadRun.Start(script, [], null, dir.File("result.json"), dir.File("workload.log")))
            {
                tree.Add(run.Pid);
                var sleepers =
                    Processes.WaitFor(() => File.Exists(pids) && File.ReadAllLines(pids) is { Length: 2 } l ? l : null,
                    TimeSpan.FromSeconds(10), "the workload's children");
                tree.AddRange(sleepers.Select(int.Parse));
                var wait = run.WaitAsync(cancel.Token);
                await cancel.CancelAsync();
                await Assert.ThrowsAnyAsync<OperationCanceledException>(() => wait);
            }
            foreach (var pid in tree) Processes.WaitUntilGone(pid, TimeSpan.FromSeconds(2));
            Assert.All(
                tree, pid => Assert.False(Processes.IsAlive(pid), $"process {pid} of the workload's tree survived"));
        }
        finally
        {
            foreach (var pid in tree) Processes.Kill(pid);
        }
    }

    [TracingFact(needsTmpfs: true)]
    public void Unwritable_output_directory_fails_in_one_line_before_anything_is_created()
    {
        var before = GlobalTracingState.Read();
        using var readOnly = new TmpfsMount("size=1m,ro");
        // Root ignores permission bits, so a read-only file system is what makes a directory unwritable here.
        foreach (var (outDir, expected) in new[] { (readOnly.Path, "is not writable"),
            (Path.Combine(readOnly.Path, "sub"), "cannot create output directory") })
        {
            using var run = TraceLabProcess.Run(
                ChildDeadline, "trace", "timemutex", "mutex", "--iterations", "1000", "--out", outDir);
            Assert.Equal(ExitCodes.Failure, run.ExitCode);
            var line = run.SingleErrorLine();
            Assert.Contains(expected, line, StringComparison.Ordinal);
            Assert.Contains("Read-only file system", line, StringComparison.Ordinal);
            Assert.DoesNotContain("running timemutex", run.Stdout, StringComparison.Ordinal);
            Assert.Empty(Directory.GetFileSystemEntries(readOnly.Path));
            Assert.Empty(Instances.OwnedBy(run.Pid));
        }
        Assert.Equal(before, GlobalTracingState.Read());
    }

    [TracingFact(needsTmpfs: true)]
    public void Disk_full_during_capture_stops_the_run_and_fails_in_one_line_leaving_nothing_half_written()
    {
        var before = GlobalTracingState.Read();
        using var tiny = new TmpfsMount("size=2m");
        var outDir = Path.Combine(tiny.Path, "out");
        var clock = Stopwatch.StartNew();
        // Ten million iterations run for minutes: only stopping at the first failed write makes this quick.
        using var run = TraceLabProcess.Run(
            ChildDeadline, "trace", "timemutex", "mutex", "--iterations", "10000000", "--out", outDir);

        Assert.Equal(ExitCodes.Failure, run.ExitCode);
        var line = run.SingleErrorLine();
        Assert.Contains("No space left on device", line, StringComparison.Ordinal);
        Assert.True(clock.Elapsed < TimeSpan.FromSeconds(30),
            $"the run went on for {clock.Elapsed.TotalSeconds:0} s after the disk filled");
        foreach (var name in new[] { "trace.dat", "report.json", "report.md", "report.html", "workload.json" })
            Assert.False(File.Exists(Path.Combine(outDir, name)), $"{name} was written although the capture failed");
        Assert.Empty(Directory.GetFiles(outDir, ".*"));
        Assert.Empty(Instances.OwnedBy(run.Pid));
        Assert.Empty(Processes.WithCommandLineContaining(outDir));
        Assert.Equal(before, GlobalTracingState.Read());
    }

    [TracingFact(needsWorkloads: false, needsTmpfs: true)]
    public void Disk_full_while_writing_trace_dat_leaves_no_trace_dat_and_keeps_the_previous_one()
    {
        using var tiny = new TmpfsMount("size=1m");
        using var rawDir = new TempDirectory("tracelab-raw");
        var root = Tracefs.Locate();
        var headerPage = File.ReadAllText(Path.Combine(root, "events", "header_page"));
        var pageSize = TraceLab.Formats.Ftrace.HeaderPageLayout.Parse(headerPage).PageSize;
        var raw = rawDir.File("cpu0.raw");
        File.WriteAllBytes(raw, new byte[pageSize * (2 * 1024 * 1024 / pageSize)]);
        var contents = new TraceDatContents
        {
            HeaderPage = headerPage,
            HeaderEvent = File.ReadAllText(Path.Combine(root, "events", "header_event"))
        };
        contents.CpuDataFiles.Add(raw);

        var previous = "a complete trace.dat from an earlier run"u8.ToArray();
        File.WriteAllBytes(Path.Combine(tiny.Path, "trace.dat"), previous);
        var output = OutputDirectory.Prepare(tiny.Path, "unused", force: true);
        var ex =
            Assert.Throws<IOException>(() => output.Commit("trace.dat", tmp => TraceDatWriter.Write(tmp, contents)));

        Assert.Contains("trace.dat", ex.Message, StringComparison.Ordinal);
        Assert.Contains("No space left on device", ex.Message, StringComparison.Ordinal);
        Assert.Equal(previous, File.ReadAllBytes(Path.Combine(tiny.Path, "trace.dat")));
        Assert.Equal(["trace.dat"], Directory.GetFileSystemEntries(tiny.Path).Select(Path.GetFileName));
    }

    /// <summary>
    /// `tracelab trace timemutex SCENARIO` in this process, its terminal output going to <paramref name="console"/>.
    /// </summary>
    private static int RunInProcess(
        TextWriter console, string scenario, string outDir, params (string Key, string Value)[] overrides)
    {
        var ansi = AnsiConsole.Create(new AnsiConsoleSettings
        {
            Out = new AnsiConsoleOutput(console),
            Interactive = InteractionSupport.No,
            Ansi =
                AnsiSupport.No,
            ColorSystem = ColorSystemSupport.NoColors,
        });
        ansi.Profile.Width = 400;
        var settings = new TraceCommand.Settings("timemutex", scenario)
        {
            Overrides = overrides.ToDictionary(o => o.Key, o => o.Value),
            Out = outDir,
            Force = true,
            BufferKb = 16 * 1024,
            Syscalls = SyscallSet.Lock,
            TimeoutSeconds = 60,
        };
        return new TraceCommand(ansi).RunAsync(settings).GetAwaiter().GetResult();
    }
}
