using TraceLab.Core;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Benchmarks;

/// <summary>
/// The checked-in kernel-mutex sample (a real capture), or TRACELAB_BENCH_TRACE, decoded once into memory.
/// </summary>
internal static class SampleTrace
{
    public static string Path
    {
        get
        {
            var env = Environment.GetEnvironmentVariable("TRACELAB_BENCH_TRACE");
            if (!string.IsNullOrEmpty(env)) return System.IO.Path.GetFullPath(env);
            for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
            {
                var candidate = System.IO.Path.Combine(dir.FullName, "sample-traces", "timemutex-mutex", "trace.dat");
                if (File.Exists(candidate)) return candidate;
            }
            throw new FileNotFoundException(
                "sample-traces/timemutex-mutex/trace.dat not found; set TRACELAB_BENCH_TRACE");
        }
    }

    /// <summary>
    /// sample-traces/perf-timemutex-mutex/capture.perf.data (a real perf record -a), or TRACELAB_BENCH_PERFDATA.
    /// </summary>
    public static string PerfDataPath
    {
        get
        {
            var env = Environment.GetEnvironmentVariable("TRACELAB_BENCH_PERFDATA");
            if (!string.IsNullOrEmpty(env)) return System.IO.Path.GetFullPath(env);
            var traceDat = Path;
            var samples = System.IO.Path.GetDirectoryName(System.IO.Path.GetDirectoryName(traceDat))!;
            return System.IO.Path.Combine(samples, "perf-timemutex-mutex", "capture.perf.data");
        }
    }

    public static KernelEvent[] Decode(string path)
    {
        var events = new List<KernelEvent>();
        using var reader = TraceDatReader.Open(path);
        reader.Read(new Collector(events));
        return [.. events];
    }

    private sealed class Collector(List<KernelEvent> events) : IKernelEventSink
    {
        public void OnEvent(in KernelEvent e) => events.Add(e);
    }
}

/// <summary>Counts events; the cheapest possible sink, so reading alone is measured.</summary>
internal sealed class CountingSink : IKernelEventSink
{
    public long Count;

    public void OnEvent(in KernelEvent e) => Count++;
}
