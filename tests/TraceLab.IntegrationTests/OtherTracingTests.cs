using System.Diagnostics;
using TraceLab.Capture.Linux;
using TraceLab.Core.Capture;

namespace TraceLab.IntegrationTests;

/// <summary>
/// At capture start TraceLab lists the other tracing on the machine (docs/metrics.md#other-tracing): a real second
/// tracefs instance with scheduler events enabled, made and removed here, and a running perf session.
/// </summary>
public sealed class OtherTracingTests
{
    [TracingFact(needsWorkloads: false)]
    public void Another_tracefs_instance_with_events_enabled_is_listed_at_capture_start_and_not_after_it_is_gone()
    {
        var root = Tracefs.Locate();
        var name = $"other-tracer-test-{Environment.ProcessId}";
        Directory.CreateDirectory(Instances.PathOf(name));
        try
        {
            File.WriteAllText(Path.Combine(Instances.PathOf(name), "events", "sched", "sched_switch", "enable"), "1");
            File.WriteAllText(Path.Combine(Instances.PathOf(name), "events", "sched", "sched_waking", "enable"), "1");

            var line = Assert.Single(OtherTracing.Find(root), l => l.Contains(name, StringComparison.Ordinal));
            Assert.Equal($"tracefs instance {name} has 2 events enabled (sched:sched_switch, sched:sched_waking)",
                line);

            // A capture started now says so, in the notices the CLI prints at its start and puts in the report.
            using var dir = new TempDirectory("tracelab-other-tracing");
            using var session = new TracefsCaptureBackend().Start(new CaptureRequest
            {
                RunId = "other-tracing-test",
                WorkDirectory = dir.Path,
                BufferSizeKb = 1024,
                Syscalls = CaptureSyscalls.None,
            });
            var notice = Assert.Single(session.Notices, n => n.StartsWith("other tracing", StringComparison.Ordinal));
            Assert.Contains(line, notice, StringComparison.Ordinal);
            Assert.Contains("changes the timings", notice, StringComparison.Ordinal);
            // The capture's own instance is not "other" tracing.
            var own = Assert.Single(Instances.OwnedBy(Environment.ProcessId));
            Assert.DoesNotContain(own, notice, StringComparison.Ordinal);
        }
        finally
        {
            var events = Path.Combine(Instances.PathOf(name), "events", "enable");
            if (File.Exists(events)) File.WriteAllText(events, "0");
            Instances.RemoveTestInstance(name);
        }
        Assert.DoesNotContain(OtherTracing.Find(Tracefs.Locate()), l => l.Contains(name, StringComparison.Ordinal));
    }

    [PerfFact(needsWorkloads: false)]
    public void A_running_perf_session_is_listed()
    {
        var psi = new ProcessStartInfo("perf")
        {
            RedirectStandardError = true,
            RedirectStandardOutput = true,
            UseShellExecute = false,
        };
        foreach (var a in (string[])["stat", "-e", "task-clock", "--", "sleep", "30"]) psi.ArgumentList.Add(a);
        using var perf = Process.Start(psi)!;
        try
        {
            // perf opens its events before it starts the program: wait for the sleep to appear under it.
            var line = Processes.WaitFor(() => OtherTracing.Find(Tracefs.Locate())
                .FirstOrDefault(l => l.StartsWith($"pid {perf.Id} (perf)", StringComparison.Ordinal)),
                TimeSpan.FromSeconds(30), "perf's events to be open");
            Assert.Equal($"pid {perf.Id} (perf) has perf events open", line);
        }
        finally
        {
            perf.Kill(entireProcessTree: true);
            perf.WaitForExit();
        }
    }
}
