using System.Text;
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
        CancellationToken cancellationToken = default) =>
        FoldedExport.Write(reader, output, (analyzer, stack) => analyzer.OffWake
            .Where(p => options.Pid is not { } pid || p.Key.Process == pid)
            .Select(p => (Line(reader.Threads.NameOf(p.Key.Process), stack(p.Key.OffStack),
                p.Key.Waker == 0 ? NoWaker : reader.Threads.NameOf(p.Key.Waker),
                p.Key.WakerStack == 0 ? [] : stack(p.Key.WakerStack)),
                p.Value.Nanoseconds)), options.Demangle, cancellationToken);

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
