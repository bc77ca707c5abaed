using System.Diagnostics;
using System.Runtime.Versioning;
using TraceLab.Capture.Windows;
using TraceLab.TestSupport;
using Xunit;
using Xunit.Abstractions;

namespace TraceLab.IntegrationTests;

/// <summary>
/// Windows (Administrator; the Windows workflow runs these): TraceLab killed with TerminateProcess (what `taskkill /f`
/// does) during a capture. Within 2 s its guard has stopped the run's ETW session; a built-in workload died with it
/// (kill-on-close job); a user's program is still running.
/// </summary>
public sealed class EtwGuardKillTests(ITestOutputHelper output)
{
    private static readonly TimeSpan StartDeadline = TimeSpan.FromSeconds(120);
    private static readonly TimeSpan CleanupLimit = TimeSpan.FromSeconds(2);

    [EtwKillFact]
    [SupportedOSPlatform("windows")]
    public void Killing_tracelab_during_a_workload_stops_the_session_and_the_workload_dies_with_it()
    {
        using var dir = new TempDirectory("tracelab-etw-kill-workload");
        var workload = KillDuringCapture(
            ["trace", "timemutex", "mutex", "--iterations", "100000000", "--out", dir.Path, "--force"], "timemutex");
        Assert.True(workload.WaitForExit((int)CleanupLimit.TotalMilliseconds),
            "the built-in workload outlived tracelab");
    }

    [EtwKillFact]
    [SupportedOSPlatform("windows")]
    public void Killing_tracelab_during_a_program_run_stops_the_session_and_leaves_the_program_running()
    {
        using var dir = new TempDirectory("tracelab-etw-kill-program");
        var program = KillDuringCapture(
            ["trace", "--out", dir.Path, "--force", "--", "ping", "-n", "60", "127.0.0.1"], "PING");
        try
        {
            Assert.False(program.WaitForExit(1000), "the user's program was killed with tracelab");
        }
        finally
        {
            program.Kill();
        }
    }

    /// <summary>
    /// Starts tracelab, waits for its session and for the process of interest (started after the test began), kills
    /// tracelab, and asserts its sessions are gone within <see cref="CleanupLimit"/>. Returns the process.
    /// </summary>
    [SupportedOSPlatform("windows")]
    private Process KillDuringCapture(string[] args, string processName)
    {
        var controller = new TraceEventSessionController();
        var began = DateTime.Now;
        using var tl = TraceLabProcess.Start(args);
        var prefix = $"{EtwSessionName.Prefix}{tl.Pid}-";
        bool Ours(string name) => name.StartsWith(prefix, StringComparison.Ordinal);
        Processes.WaitFor(() =>
        {
            if (tl.HasExited) Assert.Fail($"tracelab exited early ({tl.ExitCode}): {tl.Stderr}");
            return controller.ActiveSessionNames().Any(Ours) ? "" : null;
        }, StartDeadline, "the ETW session to start");
        var target = Processes.WaitFor(() => Process.GetProcessesByName(processName)
            .FirstOrDefault(p => p.StartTime >= began.AddSeconds(-1)), TimeSpan.FromSeconds(60), processName);

        tl.SigKill();
        var clock = Stopwatch.StartNew();
        while (controller.ActiveSessionNames().Any(Ours) && clock.Elapsed < TimeSpan.FromSeconds(10)) Thread.Sleep(10);
        output.WriteLine($"{string.Join(' ', args.Take(3))}: sessions stopped {clock.Elapsed.TotalMilliseconds:0} ms " +
            "after TerminateProcess");
        Assert.DoesNotContain(controller.ActiveSessionNames(), Ours);
        Assert.True(
            clock.Elapsed <= CleanupLimit, $"session stopped only after {clock.Elapsed.TotalMilliseconds:0} ms");
        return target;
    }
}

/// <summary>Real ETW sessions (Windows, Administrator); skipped with the reason elsewhere.</summary>
public sealed class EtwKillFactAttribute : FactAttribute
{
    public EtwKillFactAttribute()
    {
        if (TestEnvironment.EtwCaptureReason() is { } reason) Skip = reason;
    }
}
