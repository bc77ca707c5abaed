using System.Diagnostics;
using System.Globalization;

namespace TraceLab.IntegrationTests;

/// <summary>
/// `kill -9` of tracelab in each capture mode: within 1 s the capture guard has switched tracing off and removed
/// the instance; a built-in workload is gone; a user's program (or an attached process) is still running.
/// </summary>
public sealed class GuardKillTests(ITestOutputHelper output)
{
    private static readonly TimeSpan StartDeadline = TimeSpan.FromSeconds(90);
    private static readonly TimeSpan CleanupLimit = TimeSpan.FromSeconds(1);

    [TracingFact]
    public void Killing_tracelab_during_a_workload_kills_the_workload_and_removes_the_instance()
    {
        using var dir = new TempDirectory("tracelab-kill-workload");
        var workload = KillDuringCapture(
            ["trace", "timemutex", "mutex", "--iterations", "100000000", "--out", dir.Path, "--force"],
            tl => Child(tl, "timemutex"));
        Processes.WaitUntilGone(workload, CleanupLimit);
        Assert.False(Processes.IsAlive(workload), "the built-in workload outlived tracelab");
    }

    [TracingFact(needsWorkloads: false)]
    public void Killing_tracelab_during_a_program_run_leaves_the_program_running_untraced()
    {
        using var dir = new TempDirectory("tracelab-kill-program");
        // The program's output away from tracelab's pipes, which the test waits to see closed after the kill.
        var program = KillDuringCapture(
            ["trace", "--out", dir.Path, "--force", "--", "sh", "-c", "exec sleep 30 >/dev/null 2>&1"],
            tl => Child(tl, "sleep"));
        try
        {
            var stat = File.Exists($"/proc/{program}/stat") ? File.ReadAllText($"/proc/{program}/stat") : "gone";
            Assert.True(Processes.IsAlive(program), $"the user's program was killed with tracelab: {stat}");
        }
        finally
        {
            Processes.Kill(program);
        }
    }

    [TracingFact(needsWorkloads: false)]
    public void Killing_tracelab_while_attached_leaves_the_process_running()
    {
        using var dir = new TempDirectory("tracelab-kill-attach");
        using var target = Process.Start("sleep", "30");
        KillDuringCapture(
            ["trace", "--pid", target.Id.ToString(CultureInfo.InvariantCulture), "--out", dir.Path, "--force"],
            _ => target.Id);
        Assert.True(Processes.IsAlive(target.Id), "the attached process was killed with tracelab");
        target.Kill();
    }

    [TracingFact(needsWorkloads: false)]
    public void Killing_tracelab_during_a_system_capture_removes_the_instance()
    {
        using var dir = new TempDirectory("tracelab-kill-system");
        KillDuringCapture(["trace", "--system", "--out", dir.Path, "--force"], _ => 0);
    }

    /// <summary>
    /// With --stacks, perf records beside the instance: killing tracelab takes perf down too (the guard kills it), so
    /// nothing TraceLab started records on; the user's program keeps running.
    /// </summary>
    [Stacks.TraceStacksFact]
    public void Killing_tracelab_during_a_stacks_capture_stops_perf()
    {
        using var dir = new TempDirectory("tracelab-kill-stacks");
        int? perf = null;
        var program = KillDuringCapture(
            ["trace", "--stacks", "--out", dir.Path, "--force", "--", "sh", "-c", "exec sleep 30 >/dev/null 2>&1"],
            tl =>
            {
                perf ??= Child(tl, "perf");
                return perf is null ? null : Child(tl, "sleep");
            });
        try
        {
            Assert.NotNull(perf);
            Processes.WaitUntilGone(perf.Value, TimeSpan.FromSeconds(5));
            Assert.False(Processes.IsAlive(perf.Value), "perf outlived tracelab");
            Assert.True(Processes.IsAlive(program), "the user's program was killed with tracelab");
        }
        finally
        {
            Processes.Kill(program);
        }
    }

    /// <summary>
    /// Starts tracelab, waits until its instance traces and its target finder finds the process of
    /// interest, SIGKILLs tracelab, and asserts the instance is gone within <see cref="CleanupLimit"/> and the global
    /// tracing state is as before. Returns the target pid.
    /// </summary>
    private static int? Child(int parent, string comm) =>
        Processes.ChildrenOf(parent).Where(p => Processes.Comm(p) == comm).Select(p => (int?)p).FirstOrDefault();

    private int KillDuringCapture(string[] args, Func<int, int?> findTarget)
    {
        var before = GlobalTracingState.Read();
        using var tl = TraceLabProcess.Start(args);
        var instance = Processes.WaitFor(() =>
        {
            if (tl.HasExited) Assert.Fail($"tracelab exited early ({tl.ExitCode}): {tl.Stderr}");
            var mine = Instances.OwnedBy(tl.Pid).SingleOrDefault();
            if (mine is null) return null;
            try
            {
                return File.ReadAllText(Path.Combine(Instances.PathOf(mine), "tracing_on")).Trim() == "1" ? mine : null;
            }
            catch (Exception ex) when (ex is FileNotFoundException or DirectoryNotFoundException) { return null; }
        }, StartDeadline, "the capture to start");
        // 0: no particular process (--system).
        var target = int.Parse(Processes.WaitFor(() => findTarget(tl.Pid) is { } p && (p == 0 || Processes.IsAlive(p))
            ? p.ToString(CultureInfo.InvariantCulture) : null, TimeSpan.FromSeconds(30), "the traced process"),
            CultureInfo.InvariantCulture);

        tl.SigKill();
        var clock = Stopwatch.StartNew();
        while (Directory.Exists(Instances.PathOf(instance)) && clock.Elapsed < TimeSpan.FromSeconds(5))
            Thread.Sleep(10);
        var gone = clock.Elapsed;
        output.WriteLine($"{string.Join(' ', args.Take(3))}: instance removed {gone.TotalMilliseconds:0} ms " +
            "after SIGKILL");
        Assert.False(Directory.Exists(Instances.PathOf(instance)), $"instance {instance} still there 5 s after kill");
        Assert.True(gone <= CleanupLimit, $"instance removed only after {gone.TotalMilliseconds:0} ms");
        Assert.Equal(before, GlobalTracingState.Read());
        return target;
    }
}
