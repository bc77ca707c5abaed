using System.Globalization;
using System.Text;
using TraceLab.Analyzers.Stacks;
using TraceLab.Core;
using TraceLab.Formats.Symbols;

namespace TraceLab.Export.Folded;

/// <summary>
/// What the folded exports share: a trace with stacks read once through <see cref="LockStackAnalyzer"/>, its stacks
/// named, lines summed per text and written in order as "STACKS MICROSECONDS".
/// </summary>
internal static class FoldedExport
{
    /// <summary>
    /// Reads <paramref name="reader"/> and writes the lines <paramref name="lines"/> makes of the finished analyzer
    /// (each stack part with its nanoseconds; equal texts are summed).
    /// </summary>
    /// <exception cref="TraceFormatException">The trace recorded no call stacks.</exception>
    public static FoldedStacksSummary Write(IKernelTraceReader reader, Stream output,
        Func<IStackTraceReader, StackSymbolizer> symbolizerOf,
        Func<LockStackAnalyzer, IStackTraceReader, StackSymbolizer, IEnumerable<(string Line, long Ns)>> lines,
        CancellationToken cancellationToken)
    {
        if (reader is not IStackTraceReader { HasStacks: true } stacks)
            throw new TraceFormatException($"{reader.Info.TraceFile}: no call stacks in the trace " +
                "(record them with perf record -g, " +
                "e.g. perf record -g -e sched:sched_switch -e sched:sched_waking -a)");
        var analyzer = new LockStackAnalyzer(tid => reader.Threads.TryGetProcess(tid, out var p) ? p : tid);
        reader.Read(analyzer, cancellationToken);
        var symbolizer = symbolizerOf(stacks);
        var summed = new Dictionary<string, long>(StringComparer.Ordinal);
        foreach (var (line, ns) in lines(analyzer, stacks, symbolizer))
            summed[line] = summed.GetValueOrDefault(line) + ns;

        long total = 0;
        using var writer = new StreamWriter(output, new UTF8Encoding(false), leaveOpen: true) { NewLine = "\n" };
        foreach (var (line, ns) in summed.OrderBy(l => l.Key, StringComparer.Ordinal))
        {
            var us = ns / 1000;
            if (us <= 0) continue;
            total += us;
            writer.Write(line);
            writer.Write(' ');
            writer.WriteLine(us.ToString(CultureInfo.InvariantCulture));
        }

        return new FoldedStacksSummary(summed.Count, total, symbolizer.UnsymbolizedFrames, symbolizer.Frames);
    }
}
