using System.Runtime.Versioning;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Session;
using TraceLab.Core;
using TraceLab.Formats.Etw;

namespace TraceLab.Capture.Windows;

/// <summary>
/// A second, real-time kernel session (system-logger mode lets it run beside the file session) whose CSwitch,
/// ReadyThread and Thread events go through the same <see cref="EtwKernelEventMapper"/> into a sink, on a
/// background thread, while the workload runs. KrabsETW's managed wrapper would do the same but is not in the
/// package registry (docs/dependencies.md), so this is TraceEvent's real-time source.
/// </summary>
[SupportedOSPlatform("windows")]
public sealed class EtwLiveSession : IDisposable
{
    private readonly TraceEventSession _session;
    private readonly EtwKernelEventMapper _mapper = new(new ThreadTable(), new ThreadProcessMap());
    private readonly IKernelEventSink _sink;
    private readonly Thread _thread;
    private KernelEvent _event;

    private EtwLiveSession(TraceEventSession session, IKernelEventSink sink)
    {
        _session = session;
        _sink = sink;
        _session.Source.AllEvents += OnEvent;
        _thread = new Thread(() => _session.Source.Process()) { IsBackground = true, Name = "tracelab-etw-live" };
    }

    /// <summary>Events lost by the real-time session (the live view is approximate when this is not 0).</summary>
    public int EventsLost => _session.EventsLost;

    /// <summary>
    /// Starts delivering events to <paramref name="sink"/> on a background thread; the sink is only called from that
    /// thread.
    /// </summary>
    public static EtwLiveSession Start(string name, IKernelEventSink sink)
    {
        var session =
            new TraceEventSession(name, TraceEventSessionOptions.Create) { StopOnDispose = true, BufferSizeMB = 64 };
        try
        {
            session.EnableKernelProvider(EtwKernelKeywords.Live);
            var live = new EtwLiveSession(session, sink);
            live._thread.Start();
            return live;
        }
        catch
        {
            session.Dispose();
            throw;
        }
    }

    private unsafe void OnEvent(TraceEvent data)
    {
        var header = new EtwEventHeader(
            data.IsClassicProvider ? data.TaskGuid : data.ProviderGuid, (byte)data.Opcode, (byte)data.Version,
            (long)Math.Round(data.TimeStampRelativeMSec * 1_000_000), data.ProcessorNumber, data.ThreadID,
                data.PointerSize);
        var payload = new ReadOnlySpan<byte>((void*)data.DataStart, data.EventDataLength);
        // A short payload in real time is dropped, not fatal: the view is a preview, the .etl is the record.
        if (_mapper.Map(header, payload, ref _event)) _sink.OnEvent(in _event);
    }

    public void Dispose()
    {
        _session.Stop();
        _thread.Join(TimeSpan.FromSeconds(5));
        _session.Dispose();
    }
}
