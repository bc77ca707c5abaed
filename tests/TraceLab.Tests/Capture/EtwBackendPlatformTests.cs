using System.Text;
using TraceLab.Capture.Linux;
using TraceLab.Capture.Windows;
using TraceLab.Cli;
using TraceLab.Core;
using TraceLab.Core.Capture;
using TraceLab.Formats.Etw;

namespace TraceLab.Tests.Capture;

/// <summary>Backend selection, and ETW refused with one line where it cannot run.</summary>
public sealed class EtwBackendPlatformTests
{
    [Fact]
    public void The_backend_follows_the_OS()
    {
        Assert.IsType<EtwCaptureBackend>(CaptureBackends.For(windows: true));
        Assert.IsType<TracefsCaptureBackend>(CaptureBackends.For(windows: false));
        Assert.Equal(OperatingSystem.IsWindows() ? "etw" : "tracefs", CaptureBackends.ForThisMachine().Name);
        Assert.Equal("trace.etl", CaptureBackends.For(windows: true).TraceFileName);
        Assert.Equal("trace.dat", CaptureBackends.For(windows: false).TraceFileName);
    }

    [EtwRefusalFact]
    public void ETW_capture_off_Windows_is_one_line_naming_the_platform()
    {
        var ex = Assert.Throws<CaptureUnavailableException>(() => new EtwCaptureBackend().EnsureAvailable());
        Assert.Equal("the ETW backend runs on Windows only (on Linux TraceLab captures with tracefs)", ex.Message);
    }

    [Fact]
    public void Workload_marker_payload_is_NUL_terminated_UTF16()
    {
        var bytes = Encoding.Unicode.GetBytes("TRACELAB_REGION_BEGIN\0garbage");
        var e = WorkloadMarkers.ToEvent(5_000, 1, 321, bytes);
        Assert.Equal(KernelEventKind.Marker, e.Kind);
        Assert.Equal("TRACELAB_REGION_BEGIN", e.Text);
        Assert.Equal(321, e.CurrentTid);
        Assert.Equal(5_000, e.Timestamp);
        // No terminator, and an odd trailing byte, still give the whole text.
        Assert.Equal("END", WorkloadMarkers.Text([.. Encoding.Unicode.GetBytes("END"), 0x41]));
    }

    [Fact]
    public void Marker_provider_guid_is_the_one_the_win32_workload_registers()
    {
        // platform_win32.c: { 0x6b1e5b9a, 0x3f0e, 0x4c55, { 0x9a, 0x2e, 0x7d, 0x1f, 0x0c, 0x3a, 0x5e, 0x11 } }
        var source = File.ReadAllText(Path.Combine(RepoPaths.Root, "native-workloads", "platform", "platform_win32.c"));
        Assert.Contains("0x6b1e5b9a, 0x3f0e, 0x4c55, { 0x9a, 0x2e, 0x7d, 0x1f, 0x0c, 0x3a, 0x5e, 0x11 }", source);
        Assert.Equal(new Guid(0x6b1e5b9a, 0x3f0e, 0x4c55, 0x9a, 0x2e, 0x7d, 0x1f, 0x0c, 0x3a, 0x5e, 0x11),
            WorkloadMarkers.ProviderGuid);
    }
}

/// <summary>
/// Checks the refusal of ETW off Windows; skipped on Windows, where ETW is available (reason computed).
/// </summary>
public sealed class EtwRefusalFactAttribute : FactAttribute
{
    public EtwRefusalFactAttribute()
    {
        if (TestEnvironment.EtwAvailableReason() is { } reason) Skip = reason;
    }
}
