using System.Globalization;
using TraceLab.Analyzers;
using TraceLab.Core;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Benchmarks;

/// <summary>
/// Quick analysis-only cost per event, for A/B runs on a loaded machine where a BenchmarkDotNet run takes too long:
/// the first N events of the trace are decoded into memory once, then each analysis set runs over them R times and
/// the best run is kept. Time is this thread's CPU time on Linux (time spent descheduled by other load is not
/// counted), wall time elsewhere. "touch" reads each event's header fields only: the cost of streaming the
/// pre-decoded events from memory, which the real reader (one reused event in cache) does not pay — subtract it.
/// Usage: harness [--events N] [--rounds R] kinds… (kinds: touch or an --analysis list such as threads, waitgraph).
/// </summary>
internal static class AnalysisHarness
{
    public static int Run(string[] args)
    {
        var max = 2_000_000;
        var rounds = 8;
        var kinds = new List<string>();
        for (var i = 0; i < args.Length; i++)
        {
            switch (args[i])
            {
                case "--events": max = int.Parse(args[++i], CultureInfo.InvariantCulture); break;
                case "--rounds": rounds = int.Parse(args[++i], CultureInfo.InvariantCulture); break;
                default: kinds.Add(args[i]); break;
            }
        }
        if (kinds.Count == 0) kinds.AddRange(["touch", "threads", "waitgraph"]);

        var events = Decode(SampleTrace.Path, max);
        var clock = OperatingSystem.IsLinux() ? "thread CPU time" : "wall time";
        Console.WriteLine($"{events.Length:N0} events from {SampleTrace.Path}; best of {rounds}, {clock}");
        var best = kinds.ToDictionary(k => k, _ => double.MaxValue);
        for (var r = 0; r < rounds; r++)
        {
            foreach (var k in kinds)
            {
                var start = Now();
                if (k == "touch") Touch(events);
                else Analyze(events, Analyses.Catalog.Parse(k));
                best[k] = Math.Min(best[k], (double)(Now() - start) / events.Length);
            }
        }
        foreach (var k in kinds) Console.WriteLine($"{k,-24} {best[k],7:F2} ns/event");
        return 0;
    }

    private static KernelEvent[] Decode(string path, int max)
    {
        var events = new List<KernelEvent>(max);
        using var reader = TraceDatReader.Open(path);
        reader.Read(new FirstEvents(events, max));
        return [.. events];
    }

    private static long Analyze(KernelEvent[] events, AnalysisSelection kinds)
    {
        var session = new AnalysisSession(kinds);
        foreach (ref readonly var e in events.AsSpan()) session.OnEvent(e);
        session.Complete();
        return session.Accounting.SwitchEvents;
    }

    private static long Touch(KernelEvent[] events)
    {
        long sum = 0;
        foreach (ref readonly var e in events.AsSpan()) sum += e.Timestamp ^ e.CurrentTid ^ (int)e.Kind ^ e.Cpu;
        return sum;
    }

    /// <summary>This thread's CPU time in ns on Linux, wall time elsewhere.</summary>
    private static long Now() => CpuClock.CurrentThread().Ticks * 100;

    /// <summary>Keeps the first events of the trace (the reader still walks the rest).</summary>
    private sealed class FirstEvents(List<KernelEvent> events, int max) : IKernelEventSink
    {
        public void OnEvent(in KernelEvent e)
        {
            if (events.Count < max) events.Add(e);
        }
    }
}
