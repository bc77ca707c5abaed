using System.Globalization;
using System.Text;
using TraceLab.Analyzers.Stacks;
using TraceLab.Core;
using TraceLab.Formats.Symbols;

namespace TraceLab.Export.Folded;

/// <summary>
/// Blocked time per call stack together with the stack of the thread that woke it, in bcc offwaketime's folded
/// format: "process;outermost;…;innermost;--;waker innermost;…;waker outermost;waker MICROSECONDS" (kernel frames
/// marked "_[k]"), so that a flame graph shows each blocking stack with what released it stacked above
/// (docs/metrics.md#off-wake-stacks). Needs a trace recorded with stacks on the scheduler events (perf record -g).
/// </summary>
public sealed class OffWakeStacksExporter : ITraceExporter
{
    /// <summary>The waker part of an interval no thread's waking ended (an interrupt, a timer, none seen).</summary>
    public const string NoWaker = "[interrupt or none]";

    /// <summary>Builds the symbolizer of a trace's stacks (the CLI gives this machine's binaries and kernel).</summary>
    public Func<IStackTraceReader, StackSymbolizer> Symbolizer { get; init; } =
        r => new StackSymbolizer(r.Maps);

    /// <inheritdoc/>
    public string Name => "offwake";

    /// <inheritdoc/>
    public string Extension => ".folded";

    /// <inheritdoc/>
    public string Description =>
        "blocked time per call stack with its waker's stack, folded (bcc offwaketime; flamegraph.pl, speedscope)";

    /// <inheritdoc/>
    /// <exception cref="TraceFormatException">The trace recorded no call stacks.</exception>
    public IExportSummary Export(IKernelTraceReader reader, Stream output, ExportOptions options,
        CancellationToken cancellationToken = default)
    {
        if (reader is not IStackTraceReader { HasStacks: true } stacks)
            throw new TraceFormatException($"{reader.Info.TraceFile}: no call stacks in the trace " +
                "(record them with perf record -g, " +
                "e.g. perf record -g -e sched:sched_switch -e sched:sched_waking -a)");
        var analyzer = new LockStackAnalyzer(tid => reader.Threads.TryGetProcess(tid, out var p) ? p : tid);
        reader.Read(analyzer, cancellationToken);
        var symbolizer = Symbolizer(stacks);
        var lines = new Dictionary<string, long>(StringComparer.Ordinal);
        foreach (var (key, totals) in analyzer.OffWake)
        {
            if (options.Pid is { } pid && key.Process != pid) continue;
            var waker = key.Waker == 0 ? NoWaker : reader.Threads.NameOf(key.Waker);
            var wakerFrames = key.WakerStack == 0 ? [] : symbolizer.Stack(stacks.Stacks, key.WakerStack);
            var line = Line(reader.Threads.NameOf(key.Process), symbolizer.Stack(stacks.Stacks, key.OffStack),
                waker, wakerFrames);
            lines[line] = lines.GetValueOrDefault(line) + totals.Nanoseconds;
        }

        long total = 0;
        using var writer = new StreamWriter(output, new UTF8Encoding(false), leaveOpen: true) { NewLine = "\n" };
        foreach (var (line, ns) in lines.OrderBy(l => l.Key, StringComparer.Ordinal))
        {
            var us = ns / 1000;
            if (us <= 0) continue;
            total += us;
            writer.Write(line);
            writer.Write(' ');
            writer.WriteLine(us.ToString(CultureInfo.InvariantCulture));
        }

        return new FoldedStacksSummary(lines.Count, total, symbolizer.UnsymbolizedFrames, symbolizer.Frames);
    }

    /// <summary>
    /// One line's stack part: the blocked process and its frames outermost first, "--", then the waker's frames
    /// innermost first and the waker's name (bcc offwaketime's order).
    /// </summary>
    public static string Line(string process, IReadOnlyList<SymbolFrame> frames, string waker,
        IReadOnlyList<SymbolFrame> wakerFrames)
    {
        var b = new StringBuilder(FoldedStacksExporter.Line(process, frames)).Append(";--");
        foreach (var f in wakerFrames)
        {
            b.Append(';').Append(FoldedStacksExporter.Clean(f.Name));
            if (f.Kernel) b.Append("_[k]");
        }

        return b.Append(';').Append(FoldedStacksExporter.Clean(waker)).ToString();
    }
}
