using System.Diagnostics;
using System.Globalization;
using Spectre.Console;
using TraceLab.Analyzers;
using TraceLab.Core;

namespace TraceLab.Cli.Commands;

/// <summary>
/// `tracelab bench TRACE`: end-to-end speed on one file — read alone (decode + merge into a counting sink) and read +
/// analysis — repeated, reporting the best and median run as events/s and MB/s, and the process's peak RSS.
/// </summary>
public sealed class BenchCommand
{
    private readonly IAnsiConsole _console;

    public BenchCommand(IAnsiConsole console) => _console = console;

    public sealed record Result(long Events, long Bytes, double[] ReadSeconds, double[] AnalyzeSeconds, long PeakRssBytes);

    public int Run(string traceFile, int repeat, AnalysisKind analyses)
    {
        if (repeat is < 1 or > 1000) throw new UsageException("--repeat must be between 1 and 1000");
        if (!File.Exists(traceFile)) throw new UsageException($"{traceFile}: no such file");
        var r = Measure(traceFile, repeat, analyses);
        var inv = CultureInfo.InvariantCulture;
        _console.WriteLine(string.Create(inv, $"trace {traceFile}: {r.Bytes / 1e6:F1} MB, {r.Events:N0} events; {repeat} run(s) each, {Environment.ProcessorCount} CPUs, .NET {Environment.Version}"));
        Line("read (decode + merge)", r.Events, r.Bytes, r.ReadSeconds);
        Line($"read + analysis ({string.Join(",", AnalysisKinds.Format(analyses))})", r.Events, r.Bytes, r.AnalyzeSeconds);
        _console.WriteLine(string.Create(inv, $"peak RSS {r.PeakRssBytes / (1024.0 * 1024):F0} MiB (VmHWM; includes the runtime)"));
        return ExitCodes.Ok;
    }

    private void Line(string what, long events, long bytes, double[] seconds)
    {
        var sorted = seconds.Order().ToArray();
        var best = sorted[0];
        var median = sorted[sorted.Length / 2];
        _console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"{what,-44} best {best:F3} s  {events / best / 1e6,6:F1} M events/s  {bytes / best / 1e6,7:F1} MB/s   median {median:F3} s  {events / median / 1e6,6:F1} M events/s"));
    }

    /// <summary>Runs alternately read-only and read+analysis, so drift on a shared machine affects both alike.</summary>
    public static Result Measure(string traceFile, int repeat, AnalysisKind analyses)
    {
        var bytes = new FileInfo(traceFile).Length;
        var read = new double[repeat];
        var analyze = new double[repeat];
        long events = 0;
        for (var i = 0; i < repeat; i++)
        {
            var sw = Stopwatch.StartNew();
            using (var reader = TraceFiles.Open(traceFile))
            {
                reader.Read(new NullSink());
                events = reader.Info.EventCount;
            }

            read[i] = sw.Elapsed.TotalSeconds;
            sw.Restart();
            using (var reader = TraceFiles.Open(traceFile))
            {
                var session = new AnalysisSession(analyses);
                reader.Read(session);
                session.Complete();
            }

            analyze[i] = sw.Elapsed.TotalSeconds;
        }

        return new Result(events, bytes, read, analyze, PeakRss());
    }

    /// <summary>VmHWM from /proc/self/status (Linux); the managed working-set peak elsewhere.</summary>
    private static long PeakRss()
    {
        const string path = "/proc/self/status";
        if (File.Exists(path))
        {
            foreach (var line in File.ReadLines(path))
            {
                if (!line.StartsWith("VmHWM:", StringComparison.Ordinal)) continue;
                var kb = line["VmHWM:".Length..].Trim().Split(' ')[0];
                if (long.TryParse(kb, NumberStyles.Integer, CultureInfo.InvariantCulture, out var v)) return v * 1024;
            }
        }

        return Process.GetCurrentProcess().PeakWorkingSet64;
    }

    private sealed class NullSink : IKernelEventSink
    {
        public void OnEvent(in KernelEvent e) { }
    }
}
