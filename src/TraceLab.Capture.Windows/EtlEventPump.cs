using System.Runtime.Versioning;
using Microsoft.Diagnostics.Tracing;
using TraceLab.Core;
using TraceLab.Formats.Etw;

namespace TraceLab.Capture.Windows;

/// <summary>
/// Drives TraceEvent's <see cref="ETWTraceEventSource"/> over one .etl file and hands each event's header fields and
/// raw payload, in place, to the <see cref="EtwKernelEventMapper"/>.
/// </summary>
/// <remarks>
/// Only <see cref="TraceEventDispatcher.AllEvents"/> is subscribed, no kernel parser events: TraceEvent then has no
/// template for Thread/CSwitch/ReadyThread/PerfInfo and never runs its FixupData on them. That matters because
/// ThreadTraceData.FixupData rewrites the payload in place (ProcessId/ThreadId at offsets 0 and 4 become the parent
/// ids, or -1) and moves the ids into the header; the mapper reads the payload as the kernel logged it.
/// ProcessTrace delivers the events of a file in timestamp order.
/// </remarks>
[SupportedOSPlatform("windows")]
internal sealed class EtlEventPump : IDisposable
{
    private readonly ETWTraceEventSource _source;
    private readonly EtwKernelEventMapper _mapper;
    private readonly string _path;
    private IKernelEventSink? _sink;
    private CancellationToken _cancellation;
    private Exception? _failure;
    private KernelEvent _event;

    public EtlEventPump(string path, EtwKernelEventMapper mapper)
    {
        _path = path;
        _mapper = mapper;
        // FileOnly: exactly this file. MergeAll (the single-argument default) would also pull in sibling
        // *.kernel.etl / *.clrRundown.etl files.
        _source = new ETWTraceEventSource(path, TraceEventSourceType.FileOnly);
        _source.AllEvents += OnEvent;
    }

    public int ProcessorCount => _source.NumberOfProcessors;
    public int EventsLost => _source.EventsLost;
    public Version? OsVersion => _source.OSVersion;

    public long Count { get; private set; }
    public long First { get; private set; }
    public long Last { get; private set; }

    public void Run(IKernelEventSink sink, CancellationToken cancellationToken)
    {
        _sink = sink;
        _cancellation = cancellationToken;
        _source.Process();
        _sink = null;
        // Exceptions must not unwind through ProcessTrace's native frames; they were parked and are rethrown here.
        if (_failure is not null) System.Runtime.ExceptionServices.ExceptionDispatchInfo.Throw(_failure);
        cancellationToken.ThrowIfCancellationRequested();
    }

    private unsafe void OnEvent(TraceEvent data)
    {
        if (_failure is not null || _sink is null) return;
        try
        {
            var header = new EtwEventHeader(
                data.IsClassicProvider ? data.TaskGuid : data.ProviderGuid,
                (byte)data.Opcode,
                (byte)data.Version,
                (long)Math.Round(data.TimeStampRelativeMSec * 1_000_000),
                data.ProcessorNumber,
                data.ThreadID,
                data.PointerSize);
            var payload = new ReadOnlySpan<byte>((void*)data.DataStart, data.EventDataLength);
            if (header.EventGuid == WorkloadMarkers.ProviderGuid)
                _event = WorkloadMarkers.ToEvent(header.Timestamp, header.Cpu, header.ThreadId, payload);
            else if (!_mapper.Map(header, payload, ref _event))
            {
                throw new TraceFormatException(
                    $"{_path}: event {Count} ({header.EventGuid} opcode {header.Opcode}, version {header.Version}): "
                    + $"its {payload.Length}-byte payload is too short for that event");
            }

            _sink.OnEvent(in _event);
            if (Count == 0) First = header.Timestamp;
            Last = header.Timestamp;
            Count++;
            if ((Count & 0xFFFF) == 0) _cancellation.ThrowIfCancellationRequested();
        }
        catch (Exception ex)
        {
            _failure = ex;
            _source.StopProcessing();
        }
    }

    public void Dispose() => _source.Dispose();
}
