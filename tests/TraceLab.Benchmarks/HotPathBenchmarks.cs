using BenchmarkDotNet.Attributes;
using TraceLab.Analyzers;
using TraceLab.Core;
using TraceLab.Formats.PerfData;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Benchmarks;

/// <summary>
/// The analysis hot paths on a real capture: reading (page decode + per-CPU merge), scheduler accounting alone, and
/// every analysis together over pre-decoded events. Events per second = events / mean time.
/// </summary>
[MemoryDiagnoser]
public class HotPathBenchmarks
{
    private string _path = "";
    private KernelEvent[] _events = [];

    [GlobalSetup]
    public void Setup()
    {
        _path = SampleTrace.Path;
        _events = SampleTrace.Decode(_path);
        Console.WriteLine($"// {_events.Length:N0} events from {_path}");
    }

    [Benchmark(Description = "read trace.dat (decode + merge)")]
    public long Read()
    {
        using var reader = TraceDatReader.Open(_path);
        var sink = new CountingSink();
        reader.Read(sink);
        return sink.Count;
    }

    /// <summary>
    /// The checked-in perf.data sample: record walk, FINISHED_ROUND reordering and tracepoint decode.
    /// </summary>
    [Benchmark(Description = "read perf.data (decode + round reorder)")]
    public long ReadPerfData()
    {
        using var reader = PerfDataReader.Open(SampleTrace.PerfDataPath);
        var sink = new CountingSink();
        reader.Read(sink);
        return sink.Count;
    }

    /// <summary>Each analysis on its own (with the accounting every analysis builds on), and all together.</summary>
    [Params("threads", "kernel", "convoys", "wakeups", "smp", "waitgraph", "all")]
    public string Analyses { get; set; } = "all";

    [Benchmark(Description = "analyze pre-decoded events")]
    public long Analyze()
    {
        var session = new AnalysisSession(TraceLab.Analyzers.Analyses.Catalog.Parse(Analyses));
        foreach (ref readonly var e in _events.AsSpan()) session.OnEvent(e);
        session.Complete();
        return session.Accounting.SwitchEvents;
    }
}
