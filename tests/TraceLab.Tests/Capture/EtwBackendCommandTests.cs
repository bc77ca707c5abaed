using Spectre.Console;
using TraceLab.Capture.Linux;
using TraceLab.Capture.Windows;
using TraceLab.Cli.Commands;
using TraceLab.Core;

namespace TraceLab.Tests.Capture;

/// <summary>
/// The real `trace` command driving the ETW backend (with the fake session API) and the real Linux workload: the
/// session is stopped and its recording committed or removed whatever happens afterwards. Here the analysis fails
/// (an .etl cannot be read off Windows), which exercises the failure path of a run that did capture.
/// </summary>
public sealed class EtwBackendCommandTests : IDisposable
{
    private readonly string _out = Path.Combine(Path.GetTempPath(), "tracelab-etwcmd-" + Guid.NewGuid().ToString("N"));

    public void Dispose()
    {
        if (Directory.Exists(_out)) Directory.Delete(_out, recursive: true);
    }

    [EtwOffWindowsWorkloadFact]
    public async Task A_failure_after_the_capture_still_stops_the_session_and_leaves_only_final_files()
    {
        var etw = new FakeEtwController();
        etw.Active.Add("TraceLab-999999-killed-run");
        var job = new FakeProcessJob();
        var backend = new EtwCaptureBackend(etw, pid => pid == Environment.ProcessId, (from, to) => File.Copy(from, to),
            Environment.ProcessId, createJob: () => job);
        var console = AnsiConsole.Create(new AnsiConsoleSettings
        {
            Out = new AnsiConsoleOutput(TextWriter.Null),
            Interactive = InteractionSupport.No
        });
        var settings = new TraceCommand.Settings("timemutex", "mutex")
        {
            Overrides = new Dictionary<string, string> { ["iterations"] = "200" },
            Out = _out,
            BufferKb = 1024,
            Syscalls = SyscallSet.Lock,
            TimeoutSeconds = 60,
        };

        // The fake session's trace.etl is one header buffer without a logfile header: reading it fails.
        var ex =
            await Assert.ThrowsAsync<TraceFormatException>(() => new TraceCommand(console, backend).RunAsync(settings));

        Assert.Contains("TRACE_LOGFILE_HEADER", ex.Message, StringComparison.Ordinal);
        Assert.Equal(["TraceLab-999999-killed-run"], etw.StopCalls);       // the stale one, swept first
        Assert.True(etw.Last!.Disposed);                                    // ours, stopped on the way out
        Assert.Empty(etw.Active);
        var left = Directory.GetFiles(_out).Select(f => Path.GetFileName(f)).Order().ToArray();
        Assert.Equal(["trace.etl", "workload.json", "workload.log"], left);  // no .capture.etl, no .tmp
        // The built-in workload was put in the kill-on-close job (it dies with TraceLab), closed with the session.
        var result =
            TraceLab.Workloads.WorkloadResult.Parse(File.ReadAllText(Path.Combine(_out, "workload.json")), "w");
        Assert.Equal([result.Pid], job.Added);
        Assert.True(job.Disposed);
    }
}

/// <summary>
/// Needs cmake and a C compiler (the real workload) and a non-Windows OS (the .etl read must fail); reason computed.
/// </summary>
public sealed class EtwOffWindowsWorkloadFactAttribute : FactAttribute
{
    public EtwOffWindowsWorkloadFactAttribute()
    {
        var reason = TestEnvironment.EtwAvailableReason() ?? TestEnvironment.NativeToolsReason(windows: false);
        if (reason is not null) Skip = reason;
    }
}
