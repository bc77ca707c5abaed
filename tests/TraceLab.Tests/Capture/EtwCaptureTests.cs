using Microsoft.Diagnostics.Tracing.Parsers;
using TraceLab.Capture.Windows;
using TraceLab.Core.Capture;
using TraceLab.Formats.Etw;

namespace TraceLab.Tests.Capture;

/// <summary>The ETW backend's logic around the session API, through a fake controller (no kernel claims).</summary>
public sealed class EtwCaptureTests : IDisposable
{
    private const int OwnPid = 4242;
    private readonly string _dir = Path.Combine(Path.GetTempPath(), "tracelab-etw-" + Guid.NewGuid().ToString("N"));
    private readonly FakeEtwController _etw = new();
    private readonly HashSet<int> _alive = [OwnPid, 777];
    private readonly List<(string From, string To)> _merges = [];

    private EtwCaptureBackend Backend(Action<string, string>? merge = null) => new(_etw, _alive.Contains,
        merge ?? ((from, to) => { _merges.Add((from, to)); File.Copy(from, to); }), OwnPid);

    private CaptureRequest Request(CaptureSyscalls syscalls = CaptureSyscalls.Lock) =>
        new() { RunId = "timemutex-1", WorkDirectory = _dir, Syscalls = syscalls, BufferSizeKb = 64 * 1024 };

    public void Dispose()
    {
        if (Directory.Exists(_dir)) Directory.Delete(_dir, recursive: true);
    }

    [Fact]
    public void Keywords_match_the_documented_kernel_flags()
    {
        // Values from the reference (EVENT_TRACE_FLAG_*): Process 0x1, Thread 0x2, ImageLoad 0x4, ContextSwitch 0x10,
        // SystemCall 0x80, Dispatcher 0x800, Profile 0x01000000.
        Assert.Equal(0x1UL | 0x2 | 0x4 | 0x10 | 0x800, (ulong)EtwKernelKeywords.For(Request(CaptureSyscalls.None)));
        Assert.Equal(
            0x1UL | 0x2 | 0x4 | 0x10 | 0x800 | 0x80, (ulong)EtwKernelKeywords.For(Request(CaptureSyscalls.Lock)));
        Assert.Equal(
            0x1UL | 0x2 | 0x4 | 0x10 | 0x800 | 0x80, (ulong)EtwKernelKeywords.For(Request(CaptureSyscalls.All)));
        var stacks = new CaptureRequest
        {
            RunId = "r",
            WorkDirectory = _dir,
            Syscalls = CaptureSyscalls.None,
            SampledStacks = true
        };
        Assert.Equal(0x1UL | 0x2 | 0x4 | 0x10 | 0x800 | 0x01000000, (ulong)EtwKernelKeywords.For(stacks));
        Assert.Equal(KernelTraceEventParser.Keywords.None, EtwKernelKeywords.StacksFor(Request()));
        // --stacks: CSwitch (0x10) and ReadyThread (Dispatcher, 0x800) walks; the events themselves as always.
        var switchStacks = new CaptureRequest { RunId = "r", WorkDirectory = _dir, SwitchStacks = true };
        Assert.Equal(0x10UL | 0x800, (ulong)EtwKernelKeywords.StacksFor(switchStacks));
        Assert.Equal(EtwKernelKeywords.For(Request()), EtwKernelKeywords.For(switchStacks));
        Assert.Equal(0x2UL | 0x10 | 0x800, (ulong)EtwKernelKeywords.Live);
    }

    [Theory]
    [InlineData(64 * 1024, 2, 128)]
    [InlineData(64, 2, 16)]
    [InlineData(4 * 1024 * 1024, 64, 1024)]
    public void Buffer_size_is_the_per_cpu_request_times_cpus_clamped(int perCpuKb, int cpus, int expectedMb) =>
        Assert.Equal(expectedMb, EtwKernelKeywords.BufferSizeMb(perCpuKb, cpus));

    [Theory]
    [InlineData("TraceLab-123-timemutex-20261122-1", 123)]
    [InlineData("TraceLab-123", null)]
    [InlineData("TraceLab--1-x", null)]
    [InlineData("NT Kernel Logger", null)]
    [InlineData("tracelab-123-x", null)]
    public void Session_names_carry_the_owner_pid(string name, int? owner) =>
        Assert.Equal(owner, EtwSessionName.OwnerOf(name));

    [Fact]
    public void Start_stops_only_stale_TraceLab_sessions_then_starts_one_named_after_the_run()
    {
        _etw.Active.AddRange(
            ["NT Kernel Logger", "TraceLab-999-old-run", "TraceLab-777-live-run", "Other-999-x", "TraceLab-999"]);

        using var session = (EtwCaptureSession)Backend().Start(Request());

        Assert.Equal(["TraceLab-999-old-run"], _etw.StopCalls);
        Assert.Equal(
            ["stopped stale ETW session TraceLab-999-old-run left by a TraceLab run that died"], session.Notices);
        var settings = Assert.Single(_etw.Started);
        Assert.Equal($"TraceLab-{OwnPid}-timemutex-1", settings.Name);
        Assert.Equal(Path.Combine(_dir, ".capture.etl"), settings.EtlPath);
        Assert.Equal(EtwKernelKeywords.For(Request()), settings.Keywords);
        Assert.Equal([WorkloadMarkers.ProviderGuid], settings.UserProviders);
        Assert.Null(session.MarkerPath);
        Assert.Contains("TraceLab-777-live-run", _etw.Active);
    }

    private sealed class FakeMarkerWriter : IEtwMarkerWriter
    {
        public List<string> Written { get; } = [];
        public bool Disposed { get; private set; }
        public bool Write(string text)
        {
            Written.Add(text);
            return true;
        }

        public void Dispose() => Disposed = true;
    }

    /// <summary>
    /// TraceLab's own markers go into the trace as events of the workload marker provider the session records (what
    /// the ETL reader makes Marker events of), so `analyze` of the .etl leaves TraceLab out as on Linux: its pid first
    /// (TRACELAB_SELF_PIDS), then the target's window. No /proc listing is written: ETW's thread events state the
    /// processes themselves. Without a writer nothing is written and the capture goes on.
    /// </summary>
    [Fact]
    public void TraceLabs_own_markers_are_events_of_the_marker_provider_and_the_writer_goes_with_the_session()
    {
        var writer = new FakeMarkerWriter();
        var backend = new EtwCaptureBackend(_etw, _alive.Contains, (from, to) => File.Copy(from, to), OwnPid,
            createMarkerWriter: () => writer);
        using (var session = backend.Start(Request()))
        {
            var markers = new TraceLab.Cli.Commands.TargetMarkers(session);
            markers.Self([555]);
            markers.Begin();
            markers.Pids([777]);
            markers.End();
            markers.Threads([(777, (IReadOnlyList<int>)[778, 779])]);
        }

        Assert.Equal(
        [
            $"{TraceLab.Analyzers.MeasuredRegion.SelfPidsMarker}{Environment.ProcessId},555",
            TraceLab.Analyzers.MeasuredRegion.TargetBeginMarker,
            $"{TraceLab.Analyzers.MeasuredRegion.TargetPidsMarker}777",
            TraceLab.Analyzers.MeasuredRegion.TargetEndMarker,
        ], writer.Written);
        Assert.True(writer.Disposed);
        using var without = Backend().Start(Request());
        Assert.False(without.WriteMarker("TRACELAB_TARGET_BEGIN"));
        // ETW refusing the marker provider loses the markers, not the running session.
        using var refused = new EtwCaptureBackend(_etw, _alive.Contains, (from, to) => File.Copy(from, to), OwnPid,
            createMarkerWriter: () => throw new InvalidOperationException("EventRegister failed with error 5"))
            .Start(Request());
        Assert.False(refused.WriteMarker("TRACELAB_TARGET_BEGIN"));
    }

    [Fact]
    public void A_stale_session_that_cannot_be_stopped_is_reported_with_the_command_to_stop_it()
    {
        _etw.Active.Add("TraceLab-999-old");
        _etw.RefuseToStop.Add("TraceLab-999-old");
        using var session = Backend().Start(Request());
        var notice = Assert.Single(session.Notices);
        Assert.Contains("could not be stopped (Access is denied)", notice);
        Assert.Contains("logman stop TraceLab-999-old -ets", notice);
    }

    [Fact]
    public void Not_elevated_is_one_line_saying_Administrator_and_starts_nothing()
    {
        _etw.Elevated = false;
        var ex = Assert.Throws<CaptureUnavailableException>(() => Backend().EnsureAvailable());
        Assert.Equal(
            "ETW kernel capture needs Administrator: run from an elevated prompt (Run as administrator)", ex.Message);
        Assert.Throws<CaptureUnavailableException>(() => Backend().Start(Request()));
        Assert.Empty(_etw.Started);
        Assert.False(Directory.Exists(_dir));
    }

    [Fact]
    public void A_session_that_fails_to_start_leaves_no_file()
    {
        _etw.StartFailure = new UnauthorizedAccessException("Access is denied");
        var ex = Assert.Throws<CaptureUnavailableException>(() => Backend().Start(Request()));
        Assert.StartsWith(
            $"cannot start ETW kernel session TraceLab-{OwnPid}-timemutex-1: Access is denied", ex.Message);
        Assert.False(File.Exists(Path.Combine(_dir, ".capture.etl")));
    }

    [Fact]
    public void Stop_reads_events_lost_while_the_session_runs_and_reports_them()
    {
        _etw.EventsLostWhileRunning = 1234;
        using var session = Backend().Start(Request());
        var captured = (EtwCapturedTrace)session.Stop();

        Assert.Equal(1234, captured.EventsLost);
        Assert.False(_etw.Last!.Running);
        Assert.Contains(
            captured.Notes, n => n.StartsWith("the ETW session lost 1,234 events", StringComparison.Ordinal));
    }

    [Fact]
    public void No_loss_no_note()
    {
        using var session = Backend().Start(Request());
        Assert.Empty(session.Stop().Notes);
    }

    [Fact]
    public void Dispose_without_stop_stops_the_session_and_deletes_the_partial_file()
    {
        var session = Backend().Start(Request());
        var etl = ((EtwCaptureSession)session).EtlPath;
        Assert.True(File.Exists(etl));

        session.Dispose();   // the run failed before Stop

        Assert.True(_etw.Last!.Disposed);
        Assert.False(_etw.Last.Running);
        Assert.DoesNotContain(_etw.Last.Name, _etw.Active);
        Assert.False(File.Exists(etl));
    }

    [Fact]
    public void Commit_merges_into_the_final_file_and_discard_removes_the_recording()
    {
        using var session = Backend().Start(Request());
        var etl = ((EtwCaptureSession)session).EtlPath;
        var captured = session.Stop();
        session.Dispose();
        Assert.True(File.Exists(etl));   // handed over: not deleted by Dispose

        var final = Path.Combine(_dir, ".trace.etl.tmp");
        captured.WriteTo(final);
        captured.Discard();

        Assert.Equal([(etl, final)], _merges);
        Assert.Equal(FakeEtwController.HeaderBuffer, File.ReadAllBytes(final));
        Assert.False(File.Exists(etl));
        Assert.True(_etw.Last!.StopCount > 0);
    }

    [Fact]
    public void Without_the_merge_helper_the_recording_is_kept_as_is_and_the_user_is_told()
    {
        using var session = Backend(merge: (_, to) =>
        {
            File.WriteAllBytes(to, [9]);   // a half-written merge must not survive
            throw new DllNotFoundException("KernelTraceControl.dll");
        }).Start(Request());
        var captured = session.Stop();
        var final = Path.Combine(_dir, ".trace.etl.tmp");

        captured.WriteTo(final);

        Assert.Equal(FakeEtwController.HeaderBuffer, File.ReadAllBytes(final));
        Assert.Contains(
            captured.Notes, n => n.Contains("not merged (KernelTraceControl.dll)", StringComparison.Ordinal));
    }

    [Fact]
    public void Stopping_twice_is_refused()
    {
        using var session = Backend().Start(Request());
        session.Stop();
        Assert.Throws<InvalidOperationException>(() => session.Stop());
    }
}
