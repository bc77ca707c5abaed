using System.Buffers.Binary;
using TraceLab.Cli;
using TraceLab.Formats.Etl;
using TraceLab.Formats.Etw;
using TraceLab.Pipeline;
using TraceLab.Reporting;
using Xunit;

namespace TraceLab.Tests.Reporting;

/// <summary>
/// A real Windows 10 .etl (the ShutdownPerfDiagLogger autologger, external-traces/README.md: Thread Start 350, End
/// 1,032, DCStart 1,175, DCEnd 501; no CSwitch): its threads are reported under the processes their thread events
/// name. The reference is computed here from the raw thread payloads (ProcessId, ThreadId; version 0 has them the
/// other way round), independently of the event mapper and the report's grouping.
/// </summary>
public sealed class EtwProcessGroupingTests
{
    private const string Shutdown = "etw/etlparser_ShutdownPerfDiagLogger.etl";

    private readonly ITestOutputHelper _output;

    public EtwProcessGroupingTests(ITestOutputHelper output) => _output = output;

    /// <summary>tid → pid from every Thread Start/End/DCStart/DCEnd payload, the last one logged for the tid.</summary>
    private static Dictionary<int, int> RawProcessOfThread(string path)
    {
        var processOf = new Dictionary<int, int>();
        using var reader = EtlFileReader.Open(path);
        reader.PayloadObserver = (in EtlEventRecord r, ReadOnlySpan<byte> payload) =>
        {
            if (EtlEventDispatcher.GuidOf(r) != EtwKernelEvents.ThreadGuid || r.Opcode is < 1 or > 4
                || payload.Length < 8) return;
            var first = BinaryPrimitives.ReadInt32LittleEndian(payload);
            var second = BinaryPrimitives.ReadInt32LittleEndian(payload[4..]);
            var (pid, tid) = r.Version == 0 ? (second, first) : (first, second);
            if (tid > 0 && pid > 0) processOf[tid] = pid;
        };
        reader.Read(new NullSink());
        return processOf;
    }

    private sealed class NullSink : Core.IKernelEventSink
    {
        public void OnEvent(in Core.KernelEvent e) { }
    }

    [ExternalTraceFact(Shutdown)]
    public void Threads_are_reported_under_the_processes_their_thread_events_name()
    {
        var path = ExternalTraces.PathOf(Shutdown);
        var raw = RawProcessOfThread(path);
        var report = TraceAnalysis.Analyze(path, workload: null, pid: null);

        var threads = report.Threads.Where(t => raw.ContainsKey(t.Tid)).ToList();
        var expected = threads.GroupBy(t => raw[t.Tid]).ToDictionary(g => g.Key, g => g.Count());
        var multi = expected.Count(kv => kv.Value >= 2);
        var largest = expected.MaxBy(kv => kv.Value);
        _output.WriteLine($"{report.Threads.Count} threads reported, {raw.Count} in thread events; " +
            $"{report.Processes.Count} processes, {multi} with ≥ 2 threads; largest {largest.Key} " +
            $"({report.Processes.Single(p => p.Pid == largest.Key).Name}) with {largest.Value}");

        Assert.True(threads.Count > 100, $"only {threads.Count} reported threads have thread events");
        Assert.All(threads, t => Assert.Equal(raw[t.Tid], t.Pid));
        Assert.True(multi > 10, $"only {multi} processes with two threads or more");
        Assert.Equal(multi, report.Processes.Count(p => p.ThreadCount >= 2));
        // Two known processes, named by their image (Process DCStart), not by one of their threads' names.
        var system = report.Processes.Single(p => p.Pid == 4);
        Assert.Equal(("System", expected[4]), (system.Name, system.ThreadCount));
        var services = report.Processes.Single(p => p.Pid == 600);
        Assert.Equal(("services.exe", expected[600]), (services.Name, services.ThreadCount));
    }

    /// <summary>
    /// The trace logged no CSwitch (reference count 0): the report says its findings cannot be judged.
    /// </summary>
    [ExternalTraceFact(Shutdown)]
    public void A_windows_trace_without_cswitch_is_reported_as_one_whose_waits_cannot_be_judged()
    {
        var report = TraceAnalysis.Analyze(ExternalTraces.PathOf(Shutdown), workload: null, pid: null);
        Assert.Equal(17_078, report.Capture.Events);
        Assert.Equal(0, report.Capture.SwitchEvents);
        Assert.Empty(report.Findings!);
        Assert.Contains(
            report.Warnings, w => w.StartsWith("the trace has no context switches", StringComparison.Ordinal));
        Assert.Contains("No findings can be judged", ReportMarkdown.Render(report), StringComparison.Ordinal);
    }
}
