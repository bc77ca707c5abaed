using System.CommandLine;
using System.Diagnostics;
using System.Globalization;
using Spectre.Console;
using TraceLab.Analyzers;
using TraceLab.Analyzers.Parallel;
using TraceLab.Capture.Linux;
using TraceLab.Cli.CommandLine;
using TraceLab.Core;
using TraceLab.Formats;
using TraceLab.Formats.TraceDat;
using TraceLab.Reporting;

namespace TraceLab.Cli.Commands;

/// <summary>
/// `tracelab bench TRACE`: end-to-end speed on one file — read alone (decode + merge into a counting sink) and read +
/// analysis — repeated, reporting the best and median run as events/s and MB/s, and the process's peak RSS.
/// </summary>
public sealed class BenchCommand(IAnsiConsole console)
{
    private readonly IAnsiConsole _console = console;

    public static Command Create(IAnsiConsole console)
    {
        // Checked in Run: with --generate-threads it is the file to write, which must not exist yet.
        var trace = new Argument<string>("trace")
        {
            Description = $"trace file ({string.Join(", ", TraceFiles.Formats.Names)}); " +
                "with --generate-threads, the trace.dat to write",
        };
        var repeat = new Option<int>("--repeat")
        {
            Description = "runs of each measurement (best and median are shown)",
            DefaultValueFactory = _ => 5,
        };
        var analysis = SharedOptions.Analysis();
        var threads = SharedOptions.AnalysisThreads();
        var generate = new Option<int?>("--generate-threads")
        {
            Description = "first write a synthetic trace.dat with this many short-lived threads (this kernel's " +
                "tracefs formats, 10 events per thread, one process per 1,000 threads) to the trace path",
        };
        var command = new Command("bench",
            "measure read and read + analysis speed on a trace file (events/s, MB/s, CPU time, peak RSS)")
        {
            trace, repeat, analysis, threads, generate,
        };
        CommandActions.Set(command, r =>
        {
            var bench = new BenchCommand(console);
            if (r.GetValue(generate) is { } n) bench.Generate(r.GetValue(trace)!, n);
            return bench.Run(r.GetValue(trace)!, r.GetValue(repeat), r.GetValue(analysis),
                r.GetValue(threads) ?? AnalysisPlan.DefaultThreads);
        });
        return command;
    }

    /// <summary>
    /// Writes a trace.dat of <paramref name="threads"/> threads (the shape of a busy system's 100,000-thread trace).
    /// </summary>
    public void Generate(string path, int threads)
    {
        if (threads is < 1 or > 10_000_000)
            throw new UsageException("--generate-threads must be between 1 and 10,000,000");
        path = Path.GetFullPath(path);
        if (File.Exists(path)) throw new UsageException($"{path} already exists: --generate-threads writes a new file");
        ManyThreadsTraceDat.Formats formats;
        try { formats = ManyThreadsTraceDat.Formats.FromTracefs(Tracefs.Locate(mountIfNeeded: false)); }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or TracingUnavailableException)
        {
            throw new UsageException(
                $"--generate-threads needs this kernel's event formats from tracefs: {ex.Message}");
        }

        var sw = Stopwatch.StartNew();
        long events;
        try { events = ManyThreadsTraceDat.Write(path, formats, threads, Math.Max(2, threads / 1000)); }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            throw new UsageException($"{path}: {ex.Message}");
        }

        _console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"wrote {path}: {threads:N0} threads, {events:N0} events, {new FileInfo(path).Length / 1e6:F1} MB " +
            $"in {sw.Elapsed.TotalSeconds:F2} s"));
    }

    /// <summary>
    /// Per run: wall time and the process's CPU time (user + system, all threads) in seconds, and the garbage
    /// collections and managed allocation during the run.
    /// </summary>
    public sealed record Timing(double[] Wall, double[] Cpu, RunGc[] Gc)
    {
        public Timing(int repeat) : this(new double[repeat], new double[repeat], new RunGc[repeat])
        {
        }
    }

    /// <summary>Collections of each generation (a gen2 counts in all three) and bytes allocated during a run.</summary>
    public readonly record struct RunGc(int Gen0, int Gen1, int Gen2, long AllocatedBytes);

    /// <param name="LeftOut">Events the analysis runs left out in front of the analyses (RedundantEvidenceFilter).
    /// </param>
    public sealed record Result(
        long Events, long Bytes, Timing Read, Timing Analyze, Timing? AnalyzeThreaded, int AnalysisThreads,
        long PeakRssBytes, long LeftOut);

    /// <param name="analysisThreads">
    /// Also measure read + analysis with this many analysis threads besides the reader (0: only the one-thread runs).
    /// </param>
    public int Run(string traceFile, int repeat, AnalysisSelection analyses, int analysisThreads = 0)
    {
        if (repeat is < 1 or > 1000) throw new UsageException("--repeat must be between 1 and 1000");
        InputFile.Check(traceFile);
        var r = Measure(traceFile, repeat, analyses, analysisThreads);
        var inv = CultureInfo.InvariantCulture;
        _console.WriteLine(string.Create(inv, $"trace {traceFile}: {r.Bytes / 1e6:F1} MB, {r.Events:N0} events; ")
            + string.Create(
                inv, $"{repeat} run(s) each, {Environment.ProcessorCount} CPUs, .NET {Environment.Version}"));
        // The analyses on a line of their own: in a figures line they pushed it past the terminal's width.
        _console.WriteLine($"analyses: {string.Join(",", AnalysisNames.Format(analyses))}");
        // The heap's pages move the figures (new memory is most of a run's cost on some VMs): said with them.
        if (HugePageHeap.Chosen is { } pages) _console.WriteLine($"heap: {pages}");
        _console.WriteLine(string.Create(inv, $"left out in front of the analyses: {r.LeftOut:N0} events ")
            + string.Create(inv, $"({100.0 * r.LeftOut / Math.Max(1, r.Events):F1} %), unmodelled events that change ")
            + "nothing (docs/performance.md#redundant-evidence)");
        Line("read (decode + merge)", r.Events, r.Bytes, r.Read);
        Line("read + analysis, one thread", r.Events, r.Bytes, r.Analyze);
        if (r.AnalyzeThreaded is { } threaded)
            Line($"read + analysis, reader + {r.AnalysisThreads} analysis thread(s)", r.Events, r.Bytes, threaded);
        _console.WriteLine(
            string.Create(inv, $"peak RSS {r.PeakRssBytes / (1024.0 * 1024):F0} MiB (VmHWM; includes the runtime)"));
        return ExitCodes.Ok;
    }

    private void Line(string what, long events, long bytes, Timing t)
    {
        var sorted = t.Wall.Order().ToArray();
        var best = sorted[0];
        var median = sorted[sorted.Length / 2];
        var cpu = t.Cpu.Min();
        _console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"{what,-48} best {best:F3} s  {events / best / 1e6,6:F1} M events/s  {bytes / best / 1e6,7:F1} MB/s   " +
            $"median {median:F3} s   CPU best {cpu:F3} s = {cpu * 1e9 / Math.Max(1, events):F0} ns/event"));
        // The run of the CPU figure: what it paid in garbage collections, which a change of the GC's budget moves.
        var gc = t.Gc[Array.IndexOf(t.Cpu, cpu)];
        _console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"  in the run of least CPU: {gc.Gen0} gen0, {gc.Gen1} gen1, {gc.Gen2} gen2 collections, " +
            $"{gc.AllocatedBytes / 1e6:F1} MB allocated"));
    }

    /// <summary>Runs the variants in turn within each repeat, so drift on a shared machine affects all alike.</summary>
    public static Result Measure(string traceFile, int repeat, AnalysisSelection analyses, int analysisThreads = 0)
    {
        var bytes = new FileInfo(traceFile).Length;
        var read = new Timing(repeat);
        var analyze = new Timing(repeat);
        var threaded = analysisThreads > 0 ? new Timing(repeat) : null;
        long events = 0, leftOut = 0;
        // Each run reads the file into the window the run before wrote: what one read pays once for new memory is
        // not counted per event again and again (docs/performance.md#window-steps).
        using var keep = ReadBuffers.KeepBetweenReads();
        for (var i = 0; i < repeat; i++)
        {
            Time(read, i, () =>
            {
                using var reader = TraceFiles.Open(traceFile);
                reader.Read(new NullSink());
                events = reader.Info.EventCount;
            });
            Time(analyze, i, () => leftOut = Analyze(traceFile, analyses, 0));
            if (threaded is not null) Time(threaded, i, () => Analyze(traceFile, analyses, analysisThreads));
        }

        return new Result(events, bytes, read, analyze, threaded, analysisThreads, PeakRss(), leftOut);
    }

    /// <summary>One read + analysis run; returns the events left out in front of the analyses.</summary>
    private static long Analyze(string traceFile, AnalysisSelection analyses, int analysisThreads)
    {
        using var reader = TraceFiles.Open(traceFile);
        using var session = new AnalysisSession(analyses, analysisThreads: analysisThreads);
        // As `analyze` reads (TraceAnalysis): the unmodelled events that change nothing are left out in front.
        var leftOut = RedundantEvidenceFilter.Read(reader, session.Sink, session.MayLeaveOutRedundantEvidence);
        session.Complete();
        return leftOut;
    }

    private static void Time(Timing into, int i, Action run)
    {
        var (gen0, gen1, gen2) = (GC.CollectionCount(0), GC.CollectionCount(1), GC.CollectionCount(2));
        var allocated = GC.GetTotalAllocatedBytes();
        var cpu0 = CpuClock.Process();
        var sw = Stopwatch.StartNew();
        run();
        into.Wall[i] = sw.Elapsed.TotalSeconds;
        into.Cpu[i] = (CpuClock.Process() - cpu0).TotalSeconds;
        into.Gc[i] = new RunGc(GC.CollectionCount(0) - gen0, GC.CollectionCount(1) - gen1,
            GC.CollectionCount(2) - gen2, GC.GetTotalAllocatedBytes() - allocated);
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
