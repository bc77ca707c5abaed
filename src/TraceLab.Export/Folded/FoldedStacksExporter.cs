using System.Globalization;
using System.Text;
using TraceLab.Core;
using TraceLab.Formats.Symbols;

namespace TraceLab.Export.Folded;

/// <summary>
/// Blocked time per call stack in the folded-stack format that flamegraph.pl, inferno and speedscope read (bcc
/// offcputime -f): one line per process and stack, "process;outermost;…;innermost MICROSECONDS", kernel frames
/// marked "_[k]". The time is what the thread spent off CPU after a blocking switch-out with that stack
/// (docs/metrics.md#off-cpu-stacks). Needs a trace recorded with stacks (perf record -g).
/// </summary>
public sealed class FoldedStacksExporter : ITraceExporter
{
    /// <inheritdoc/>
    public string Name => "folded";

    /// <inheritdoc/>
    public string Extension => ".folded";

    /// <inheritdoc/>
    public string Description => "blocked time per call stack, folded (flamegraph.pl, inferno, speedscope)";

    /// <inheritdoc/>
    /// <exception cref="TraceFormatException">The trace recorded no call stacks.</exception>
    public IExportSummary Export(IKernelTraceReader reader, Stream output, ExportOptions options,
        CancellationToken cancellationToken = default) =>
        FoldedExport.Write(reader, output, (analyzer, stack) => analyzer.OffCpu
            .Where(p => options.Pid is not { } pid || p.Key.Process == pid)
            .Select(p => (Line(reader.Threads.NameOf(p.Key.Process), stack(p.Key.Stack)),
                p.Value.Nanoseconds)), options.Demangle, cancellationToken);

    /// <summary>One folded line's stack part: the process, then the frames outermost first.</summary>
    public static string Line(string process, IReadOnlyList<SymbolFrame> frames)
    {
        var b = new StringBuilder(Clean(process));
        for (var i = frames.Count - 1; i >= 0; i--)
        {
            b.Append(';').Append(Clean(frames[i].Name));
            if (frames[i].Kernel) b.Append("_[k]");
        }

        return b.ToString();
    }

    /// <summary>';' separates frames and ' ' the count: neither may appear inside a name.</summary>
    internal static string Clean(string name) => name.Replace(';', ':').Replace(' ', '_');
}

/// <summary>What the folded export wrote.</summary>
/// <param name="Stacks">Lines written.</param>
/// <param name="Microseconds">Blocked time in them.</param>
/// <param name="UnsymbolizedFrames">Frames without a function name.</param>
/// <param name="Frames">Frames named.</param>
public sealed record FoldedStacksSummary(int Stacks, long Microseconds, long UnsymbolizedFrames, long Frames)
    : IExportSummary
{
    /// <inheritdoc/>
    public IReadOnlyList<string> Lines(ExportedFile file) =>
    [
        string.Create(CultureInfo.InvariantCulture,
            $"Folded stacks {file.Path}: {Stacks:N0} stacks, {Microseconds / 1e6:0.000} s blocked; " +
            $"{UnsymbolizedFrames:N0} of {Frames:N0} frames without a function name"),
        "Draw it with flamegraph.pl or inferno-flamegraph, or open it at https://www.speedscope.app",
    ];
}
