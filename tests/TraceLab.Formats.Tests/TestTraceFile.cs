using TraceLab.Core;
using TraceLab.Formats.Registry;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Formats.Tests;

/// <summary>
/// Writes small trace.dat files from hand-built pages, with the resource formats plus any extra format texts.
/// </summary>
internal sealed class TestTraceFile : IDisposable
{
    public TestTraceFile() => Directory = System.IO.Directory.CreateTempSubdirectory("tracelab-testtrace-").FullName;

    public string Directory { get; }

    /// <summary>The /proc/kallsyms text the next files carry; empty: none.</summary>
    public string Kallsyms { get; set; } = "";

    public void Dispose() => System.IO.Directory.Delete(Directory, recursive: true);

    /// <param name="cpuPages">Per CPU, its pages in order.</param>
    public string Write(
        string name, IReadOnlyList<byte[][]> cpuPages, params (string System, string Text)[] extraFormats)
    {
        var c = new TraceDatContents
        {
            HeaderPage = TestData.Resource("header_page"),
            HeaderEvent = TestData.Resource("header_event"),
            Kallsyms = Kallsyms,
        };
        foreach (var (system, text) in TestData.AllFormats().Concat(extraFormats))
        {
            if (system == "ftrace") c.FtraceFormats.Add(text);
            else c.AddEventFormat(system, text);
        }

        for (var cpu = 0; cpu < cpuPages.Count; cpu++)
        {
            var raw = Path.Combine(Directory, $"{name}.cpu{cpu}.raw");
            File.WriteAllBytes(raw, cpuPages[cpu].SelectMany(p => p).ToArray());
            c.CpuDataFiles.Add(raw);
        }

        var path = Path.Combine(Directory, name);
        TraceDatWriter.Write(path, c);
        return path;
    }

    public static byte[] Switch(int prev, int next) =>
        KernelEventDecoderTests.Payload(TestData.Format("sched", "sched_switch"), prev,
            w => w.Comm("prev_comm", $"t{prev}").Int("prev_pid", prev).Int("prev_state", 1)
                .Comm("next_comm", $"t{next}").Int("next_pid", next));

    /// <summary>Reads every event; returns the events' timestamps and CPUs.</summary>
    public static (TraceInfo Info, List<(long Ts, int Cpu)> Events) ReadAll(string path, bool salvage = false)
    {
        using var reader = TraceDatReader.Open(path, new TraceReadOptions { Salvage = salvage });
        var sink = new TraceDatRoundTripTests.ListSink();
        reader.Read(sink);
        return (reader.Info, sink.Events.Select(e => (e.Timestamp, e.Cpu)).ToList());
    }
}
