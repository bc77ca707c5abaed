using System.Globalization;
using System.Text;
using TraceLab.Analyzers;
using TraceLab.Analyzers.Stacks;
using TraceLab.Core;
using TraceLab.Formats.Symbols;
using TraceLab.Pipeline;

namespace TraceLab.Export.Folded;

/// <summary>
/// What the folded exports share: a trace with stacks read once through the pipeline's <see cref="LockStackAnalyzer"/>,
/// its stacks named, lines summed per text and written in order as "STACKS MICROSECONDS".
/// </summary>
internal static class FoldedExport
{
    /// <summary>
    /// Reads <paramref name="reader"/> through the pipeline (the lock stacks and the symbolizer `tracelab analyze`
    /// uses) and writes the lines <paramref name="lines"/> makes of them (each stack part with its nanoseconds;
    /// equal texts are summed).
    /// </summary>
    /// <exception cref="TraceFormatException">The trace recorded no call stacks.</exception>
    /// <param name="demangle">C++ frames named as perf script names them; false: as linked.</param>
    public static FoldedStacksSummary Write(IKernelTraceReader reader, Stream output,
        Func<LockStackAnalyzer, Func<int, IReadOnlyList<SymbolFrame>>, IEnumerable<(string Line, long Ns)>> lines,
        bool demangle, CancellationToken cancellationToken)
    {
        if (reader is not IStackTraceReader { HasStacks: true } stacks)
            throw new TraceFormatException($"{reader.Info.TraceFile}: no call stacks in the trace " +
                "(record them with perf record -g, " +
                "e.g. perf record -g -e sched:sched_switch -e sched:sched_waking -a)");
        var outcome = new OutcomeOf();
        TraceAnalysis.Run(reader, new AnalysisRequest(reader.Info.TraceFile)
        {
            Analyses = AnalysisSelection.None,
            Observer = outcome,
            Demangle = demangle,
        }, cancellationToken);
        var (analyzer, symbolizer) = (outcome.Value!.Stacks!, outcome.Value.Symbolizer!);
        // The frames of the stacks this export names, each stack once (the report named some of them already).
        var named = new HashSet<int>();
        long frames = 0, unnamed = 0;
        IReadOnlyList<SymbolFrame> Name(int id)
        {
            var stack = symbolizer.Stack(stacks.Stacks, id);
            if (named.Add(id))
            {
                frames += stack.Count;
                unnamed += stack.Count(f => f.Symbol is null);
            }
            return stack;
        }

        var summed = new Dictionary<string, long>(StringComparer.Ordinal);
        foreach (var (line, ns) in lines(analyzer, Name))
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

        return new FoldedStacksSummary(summed.Count, total, unnamed, frames);
    }

    /// <summary>Keeps what the pass left; adds nothing to it.</summary>
    private sealed class OutcomeOf : IPassObserver
    {
        public PassOutcome? Value { get; private set; }

        public IKernelEventSink? Attach(IKernelTraceReader reader, AnalysisSession session) => null;

        public void Complete(PassOutcome outcome) => Value = outcome;
    }
}
