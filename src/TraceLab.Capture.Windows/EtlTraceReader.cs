using TraceLab.Core;
using TraceLab.Formats.Etw;

namespace TraceLab.Capture.Windows;

/// <summary>
/// Reads an ETW .etl file (kernel logger with Thread, ContextSwitch, Dispatcher and optionally SystemCall keywords)
/// as TraceLab kernel events. Windows only: elsewhere <see cref="Open"/> throws
/// <see cref="PlatformNotSupportedException"/> before TraceEvent is loaded.
/// </summary>
/// <remarks>
/// Timestamps are nanoseconds since the session start. ETW reports lost events as one total, so
/// <see cref="TraceInfo.LostEventsPerCpu"/> holds a single element.
/// </remarks>
public sealed class EtlTraceReader : IKernelTraceReader
{
    private readonly EtlEventPump _pump;
    private readonly string _path;
    private bool _read;

    private EtlTraceReader(
        EtlEventPump pump, string path, TraceInfo info, ThreadTable threads, ThreadProcessMap processes)
    {
        _pump = pump;
        _path = path;
        Info = info;
        Threads = threads;
        Processes = processes;
    }

    public TraceInfo Info { get; }
    public ThreadTable Threads { get; }

    /// <summary>Thread → process, from Thread Start/End/rundown events (filled while reading).</summary>
    public ThreadProcessMap Processes { get; }

    /// <exception cref="PlatformNotSupportedException">Not running on Windows.</exception>
    /// <exception cref="FileNotFoundException">No such file.</exception>
    public static EtlTraceReader Open(string path)
    {
        if (!EtwPlatform.IsSupported) throw EtwPlatform.NotSupported(path);
        if (!File.Exists(path)) throw new FileNotFoundException($"{path}: no such .etl file", path);

        var threads = new ThreadTable();
        var processes = new ThreadProcessMap();
        var pump = new EtlEventPump(path, new EtwKernelEventMapper(threads, processes));
        var info = new TraceInfo
        {
            Backend = "etw",
            TraceFile = path,
            CpuCount = pump.ProcessorCount,
            LostEventsPerCpu = [pump.EventsLost],
            KernelRelease = pump.OsVersion is { } v ? $"Windows {v}" : null,
        };
        return new EtlTraceReader(pump, path, info, threads, processes);
    }

    /// <summary>Streams every event once; a second call throws because the reader is single-pass.</summary>
    public void Read(IKernelEventSink sink, CancellationToken cancellationToken = default)
    {
        if (!EtwPlatform.IsSupported) throw EtwPlatform.NotSupported(_path);
        if (_read)
            throw new InvalidOperationException("EtlTraceReader.Read streams the file once; open it again to re-read.");
        _read = true;

        _pump.Run(sink, cancellationToken);
        Info.EventCount = _pump.Count;
        Info.FirstTimestamp = _pump.First;
        Info.LastTimestamp = _pump.Last;
    }

    public void Dispose()
    {
        if (EtwPlatform.IsSupported) _pump.Dispose();
    }
}
