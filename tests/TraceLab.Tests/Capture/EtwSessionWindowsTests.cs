using System.Runtime.Versioning;
using Microsoft.Diagnostics.Tracing.Session;
using TraceLab.Capture.Windows;
using TraceLab.Cli.Live;
using TraceLab.Core;
using TraceLab.Core.Capture;

namespace TraceLab.Tests.Capture;

/// <summary>
/// Real ETW kernel sessions (Windows, Administrator; the Windows workflow runs them): the capture records switches
/// that the .etl reader maps, stale TraceLab sessions are stopped and foreign ones are not, and the real-time
/// source feeds the live view.
/// </summary>
public sealed class EtwSessionWindowsTests : IDisposable
{
    private readonly string _dir =
        Path.Combine(Path.GetTempPath(), "tracelab-etw-real-" + Guid.NewGuid().ToString("N"));

    public void Dispose()
    {
        if (Directory.Exists(_dir)) Directory.Delete(_dir, recursive: true);
    }

    private static void Churn()
    {
        // Threads that block and wake each other: plenty of CSwitch and ReadyThread events.
        using var ping = new SemaphoreSlim(0);
        using var pong = new SemaphoreSlim(0);
        var other = new Thread(() => { for (var i = 0; i < 2000; i++) { ping.Wait(); pong.Release(); } });
        other.Start();
        for (var i = 0; i < 2000; i++) { ping.Release(); pong.Wait(); }
        other.Join();
    }

    [EtwCaptureFact]
    [SupportedOSPlatform("windows")]
    public void A_capture_records_switches_the_reader_maps_and_leaves_no_session()
    {
        var backend = new EtwCaptureBackend();
        var controller = new TraceEventSessionController();
        string etl;
        using (var session = (EtwCaptureSession)backend.Start(new CaptureRequest
        {
            RunId = "test-" + Guid.NewGuid()
            .ToString("N")[..8],
            WorkDirectory = _dir,
            BufferSizeKb = 1024
        }))
        {
            Assert.Contains(session.SessionName, controller.ActiveSessionNames());
            Churn();
            var captured = session.Stop();
            Assert.DoesNotContain(session.SessionName, controller.ActiveSessionNames());
            etl = Path.Combine(_dir, "trace.etl");
            captured.WriteTo(etl);
            captured.Discard();
        }

        using var reader = TraceLab.Formats.Etl.EtlFileReader.Open(etl);
        var sink = new Counting();
        reader.Read(sink);
        Assert.True(sink.Switches > 1000, $"only {sink.Switches} switches");
        Assert.True(sink.Wakings > 0, "no ReadyThread events");
        Assert.Equal(Environment.ProcessorCount, reader.Info.CpuCount);
    }

    [EtwCaptureFact]
    [SupportedOSPlatform("windows")]
    public void Stale_TraceLab_sessions_are_stopped_and_foreign_ones_left_alone()
    {
        var deadPid = Enumerable.Range(900_000, 1000).First(p => !EtwStaleSessions.ProcessAlive(p));
        var stale = EtwSessionName.For(deadPid, "killed-" + Guid.NewGuid().ToString("N")[..8]);
        var foreign = "NotTraceLab-" + Guid.NewGuid().ToString("N")[..8];
        Directory.CreateDirectory(_dir);
        // What a killed run leaves: sessions that outlive their process.
        using var s1 = new TraceEventSession(stale, Path.Combine(_dir, "stale.etl")) { StopOnDispose = false };
        s1.EnableKernelProvider(EtwKernelKeywords.Live);
        using var s2 = new TraceEventSession(foreign, Path.Combine(_dir, "foreign.etl")) { StopOnDispose = true };
        s2.EnableKernelProvider(EtwKernelKeywords.Live);
        try
        {
            var controller = new TraceEventSessionController();
            var result = EtwStaleSessions.Stop(controller, EtwStaleSessions.ProcessAlive);
            Assert.Contains(stale, result.Stopped);
            var active = controller.ActiveSessionNames();
            Assert.DoesNotContain(stale, active);
            Assert.Contains(foreign, active);
        }
        finally
        {
            s1.Stop(noThrow: true);
            s2.Stop(noThrow: true);
        }
    }

    [EtwCaptureFact]
    [SupportedOSPlatform("windows")]
    public void The_real_time_source_feeds_the_live_rates()
    {
        var intervals = new List<LiveInterval>();
        var rates = new LiveThreadRates(i => { lock (intervals) intervals.Add(i); }, intervalNs: 200_000_000);
        using (EtwLiveSession.Start(
            EtwSessionName.For(Environment.ProcessId, "live-" + Guid.NewGuid().ToString("N")[..8]), rates))
        {
            var deadline = DateTime.UtcNow.AddSeconds(20);
            while (DateTime.UtcNow < deadline)
            {
                Churn();
                lock (intervals) if (intervals.Any(i => i.Threads.Count > 0)) break;
            }
        }
        lock (intervals) Assert.Contains(intervals, i => i.Threads.Any(t => t.Switches > 0));
    }

    private sealed class Counting : IKernelEventSink
    {
        public long Switches, Wakings;
        public void OnEvent(in KernelEvent e)
        {
            if (e.Kind == KernelEventKind.Switch) Switches++;
            else if (e.Kind == KernelEventKind.Waking) Wakings++;
        }
    }
}

/// <summary>Needs Windows and Administrator (real ETW kernel sessions); reason computed by TestEnvironment.</summary>
public sealed class EtwCaptureFactAttribute : FactAttribute
{
    public EtwCaptureFactAttribute()
    {
        if (TestEnvironment.EtwCaptureReason() is { } reason) Skip = reason;
    }
}
