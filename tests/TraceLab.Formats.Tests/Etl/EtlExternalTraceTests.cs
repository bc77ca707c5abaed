using TraceLab.Core;
using TraceLab.Formats.Etl;
using TraceLab.Formats.Etw;

namespace TraceLab.Formats.Tests.Etl;

/// <summary>
/// The three public .etl files read on Linux. The reference counts are dissect.etl's (external-traces/README.md),
/// an independent reader; none of these files has CSwitch or ReadyThread events.
/// </summary>
public sealed class EtlExternalTraceTests
{
    private readonly ITestOutputHelper _output;

    public EtlExternalTraceTests(ITestOutputHelper output) => _output = output;

    private sealed class Counts
    {
        public long Records;
        public Dictionary<(Guid, byte), long> ByEvent { get; } = [];
        public Dictionary<EtlHeaderKind, long> ByKind { get; } = [];

        public void Add(EtlEventRecord r, int cpu)
        {
            Records++;
            var key = (EtlEventDispatcher.GuidOf(r), r.Opcode);
            ByEvent[key] = ByEvent.GetValueOrDefault(key) + 1;
            ByKind[r.Kind] = ByKind.GetValueOrDefault(r.Kind) + 1;
        }

        public long Thread(byte opcode) => ByEvent.GetValueOrDefault((EtwKernelEvents.ThreadGuid, opcode));
        public long Process(byte opcode) => ByEvent.GetValueOrDefault((EtwKernelEvents.ProcessGuid, opcode));
    }

    private sealed class OrderSink : IKernelEventSink
    {
        public long Events;
        public long Backwards;
        public long Forks;
        private long _last = long.MinValue;

        public void OnEvent(in KernelEvent e)
        {
            Events++;
            if (e.Timestamp < _last) Backwards++;
            _last = e.Timestamp;
            if (e.Kind == KernelEventKind.Fork) Forks++;
        }
    }

    private (EtlFileReader Reader, Counts Counts, OrderSink Sink) ReadAll(string path)
    {
        var reader = EtlFileReader.Open(path);
        var counts = new Counts();
        reader.RecordObserver = counts.Add;
        var sink = new OrderSink();
        reader.Read(sink);
        _output.WriteLine($"{Path.GetFileName(path)}: {reader.Buffers} buffers, {sink.Events} events, "
            + $"{reader.Info.CpuCount} CPUs, clock {reader.Info.TraceClock}, {reader.Info.KernelRelease}, "
            + $"kinds {string.Join(", ", counts.ByKind.Select(k => $"{k.Key} {k.Value}"))}, "
            + $"newer {reader.NewerVersionEvents}, unknown {reader.UnknownHeaderEvents}, "
            + $"names {reader.Threads.Names.Count}");
        foreach (var (key, n) in counts.ByEvent.OrderByDescending(kv => kv.Value).Take(12))
            _output.WriteLine($"  {key.Item1} op {key.Item2}: {n}");
        return (reader, counts, sink);
    }

    [ExternalTraceFact(ExternalEtl.ShutdownLogger)]
    public void Shutdown_logger_rundown_counts_equal_the_reference()
    {
        using var file = new ExternalEtl(ExternalEtl.ShutdownLogger);
        var (reader, counts, sink) = ReadAll(file.Path);
        using var _ = reader;

        Assert.Equal(17_078, counts.Records);
        Assert.Equal(17_078, sink.Events);
        Assert.Equal(350, counts.Thread(EtwKernelEvents.ThreadStart));
        Assert.Equal(1_032, counts.Thread(EtwKernelEvents.ThreadEnd));
        Assert.Equal(1_175, counts.Thread(EtwKernelEvents.ThreadDCStart));
        Assert.Equal(501, counts.Thread(EtwKernelEvents.ThreadDCEnd));
        Assert.Equal(94, counts.Process(EtwKernelEvents.ProcessDCStart));
        Assert.Equal(37, counts.Process(EtwKernelEvents.ProcessDCEnd));
        Assert.Equal(60, counts.Process(EtwKernelEvents.ProcessEnd));
        Assert.Equal(0, counts.Thread(EtwKernelEvents.CSwitch));
        Assert.Equal(350 + 1_175, sink.Forks);
        Assert.Equal(0, sink.Backwards);
        Assert.Equal(2, reader.Info.CpuCount);
        Assert.Contains("18362", reader.Info.KernelRelease, StringComparison.Ordinal);
        // Thread names logged in the v3 thread rundown; unnamed threads take their process's image name.
        Assert.Equal("EventLog-System", reader.Threads.NameOf(1372));
        Assert.Equal("Win32k Raw Input Thread", reader.Threads.NameOf(560));
        Assert.Equal("services.exe", reader.Processes.Images[600]);
        Assert.Equal("services.exe", reader.Threads.NameOf(FirstThreadOf(reader, 600)));
    }

    [ExternalTraceFact(ExternalEtl.PerfView)]
    public void PerfView_merged_trace_rundown_counts_equal_the_reference()
    {
        using var file = new ExternalEtl(ExternalEtl.PerfView);
        var (reader, counts, sink) = ReadAll(file.Path);
        using var _ = reader;

        Assert.Equal(179_474, counts.Records);
        Assert.Equal(670, counts.Thread(EtwKernelEvents.ThreadDCStart));
        Assert.Equal(664, counts.Thread(EtwKernelEvents.ThreadDCEnd));
        Assert.Equal(9, counts.Thread(EtwKernelEvents.ThreadStart));
        Assert.Equal(15, counts.Thread(EtwKernelEvents.ThreadEnd));
        Assert.Equal(32, counts.Process(EtwKernelEvents.ProcessDCStart));
        Assert.Equal(32, counts.Process(EtwKernelEvents.ProcessDCEnd));
        Assert.Equal(0, counts.Thread(EtwKernelEvents.CSwitch));
        Assert.Equal(0, counts.Thread(EtwKernelEvents.ReadyThread));
        Assert.Equal(0, sink.Backwards);
        Assert.Equal(8, reader.Info.CpuCount);
        // Version 2 thread events carry no names: threads are named after their process's image.
        Assert.Equal("svchost.exe", reader.Processes.Images[840]);
        Assert.Equal("svchost.exe", reader.Threads.NameOf(FirstThreadOf(reader, 840)));
    }

    [ExternalTraceFact(ExternalEtl.TraceLoggingTester)]
    public void Windows11_merged_trace_rundown_counts_equal_the_reference()
    {
        using var file = new ExternalEtl(ExternalEtl.TraceLoggingTester);
        var (reader, counts, sink) = ReadAll(file.Path);
        using var _ = reader;

        Assert.Equal(172_716, counts.Records);
        Assert.Equal(6_719, counts.Thread(EtwKernelEvents.ThreadDCEnd));
        Assert.Equal(23, counts.Thread(EtwKernelEvents.ThreadStart));
        Assert.Equal(8, counts.Thread(EtwKernelEvents.ThreadEnd));
        Assert.Equal(1, counts.Thread(EtwKernelEvents.ThreadSetName));
        Assert.Equal(360, counts.Process(EtwKernelEvents.ProcessDCEnd));
        Assert.Equal(0, counts.Thread(EtwKernelEvents.CSwitch));
        Assert.Equal(0, sink.Backwards);
        Assert.Equal(20, reader.Info.CpuCount);
        // The one Thread SetName event of the file names WPR's rundown thread.
        Assert.Equal("WPR_initiated_WprApp_WPR System Collector_Rundown_e520", reader.Threads.NameOf(19712));
    }

    private static int FirstThreadOf(EtlFileReader reader, int pid) =>
        reader.Processes.Processes.Where(kv => kv.Value == pid && kv.Key != pid).Min(kv => kv.Key);
}
