using System.Globalization;
using TraceLab.Analyzers.Stacks;
using TraceLab.Core;
using TraceLab.Formats.Symbols;

namespace TraceLab.Reporting.Stacks;

/// <summary>
/// Turns a <see cref="LockStackAnalyzer"/>'s totals into report.json's "stacks" section: every frame named by the
/// <see cref="StackSymbolizer"/>, every lock word named (docs/metrics.md#lock-name).
/// </summary>
public static class StacksReportBuilder
{
    /// <summary>
    /// The frames of a stack that belong to the lock implementation, skipped when naming a call site.
    /// </summary>
    public static bool IsLockImplementation(SymbolFrame f) =>
        f.Kernel || f.ModuleName.StartsWith("libc.so", StringComparison.Ordinal)
        || f.ModuleName.StartsWith("libc-", StringComparison.Ordinal)
        || f.ModuleName.StartsWith("libpthread", StringComparison.Ordinal)
        || f.ModuleName.StartsWith("ld-linux", StringComparison.Ordinal);

    /// <summary>Builds the section.</summary>
    /// <param name="stackFile">How a stack recording beside the trace was joined to it; null when none.</param>
    /// <param name="readerNotes">What the reader could not give a stack (<see cref="IStackTraceReader.StackNotes"/>),
    /// said before the symbols' notes.</param>
    public static StacksSection Build(LockStackAnalyzer analyzer, StackTable stacks, StackSymbolizer symbolizer,
        TraceLab.Formats.StackJoin.StackJoinSummary? stackFile = null, IReadOnlyList<string>? readerNotes = null)
    {
        var locks = new List<LockStacksEntry>();
        foreach (var (key, l) in analyzer.Locks.OrderByDescending(k => k.Value.WaitNanoseconds)
                     .ThenBy(k => k.Key.Process).ThenBy(k => k.Key.Address))
        {
            var blocking = Entries(l.Blocking, stacks, symbolizer);
            var releasing = Entries(l.Releasing, stacks, symbolizer);
            var (name, kind, module) = Name(key, l, blocking, symbolizer);
            locks.Add(new LockStacksEntry
            {
                Process = key.Process,
                Address = Hex(key.Address),
                Name = name,
                NameKind = kind,
                Module = module,
                Waits = l.Waits,
                WaitMs = Ms(l.WaitNanoseconds),
                Blocking = blocking,
                Releasing = releasing,
            });
        }

        var offCpu = analyzer.OffCpu.OrderByDescending(o => o.Value.Nanoseconds).ThenBy(o => o.Key.Stack)
            .Select(o => Entry(o.Key.Stack, o.Value, stacks, symbolizer)).ToList();
        return new StacksSection
        {
            EventsWithStacks = analyzer.EventsWithStacks,
            DistinctStacks = stacks.Count,
            Frames = symbolizer.Frames,
            UnsymbolizedFrames = symbolizer.UnsymbolizedFrames,
            TruncatedStacks = stacks.Truncated,
            UnwoundStacks = stacks.Unwound > 0 ? stacks.Unwound : null,
            UnwoundShort = stacks.Unwound > 0 ? stacks.UnwoundShort : null,
            InterruptWakeups = analyzer.InterruptWakeups,
            StackFile = stackFile,
            Notes = [.. readerNotes ?? [], .. symbolizer.Notes],
            Locks = locks,
            OffCpu = offCpu,
        };
    }

    /// <summary>
    /// The lock's name: the variable its address lies in; else its call site, the first two frames of its heaviest
    /// blocking stack outside the lock implementation ("lock taken in queue_push ← producer_loop"); else its address.
    /// </summary>
    private static (string Name, string Kind, string? Module) Name(LockAddress key, LockStacks l,
        List<StackEntry> blocking, StackSymbolizer symbolizer)
    {
        if (symbolizer.DataObject(key.Process, key.Address, l.FirstSeen) is { } v)
            return (v.Name, "variable", v.Module);
        foreach (var stack in blocking)
        {
            // A frame no mapping holds ([unknown]: a frame-pointer walk's guess through code without them) names
            // nothing; the first two frames that do, name the site.
            var frames = stack.Frames.Where(f => !IsImplementation(f) && f.Module != SymbolFrame.Unknown).Take(2)
                .ToList();
            var sites = frames.Select(f => f.Symbol ?? Path.GetFileName(f.Module) + "+" + f.Offset).ToList();
            // Where debug information gives it, the line the lock is taken at: "queue_push ← producer_loop (q.c:88)".
            var line = frames.Count > 0 && frames[0].File is { } file && frames[0].Line is { } n
                ? $" ({Path.GetFileName(file)}:{n.ToString(CultureInfo.InvariantCulture)})"
                : "";
            if (sites.Count > 0) return ("lock taken in " + string.Join(" ← ", sites) + line, "call site", null);
        }

        return ("futex " + Hex(key.Address), "address", null);
    }

    /// <summary>
    /// Puts each named lock's name into the findings' titles and remedies, where they call it by its address
    /// ("futex 0x55…080 (pid 14366)" becomes "g_stats_lock (futex 0x55…080, pid 14366)"); the findings' object ids
    /// stay as they are.
    /// </summary>
    public static void NameLocksInFindings(RunReport report)
    {
        if (report.Stacks is not { } stacks || report.Findings is not { } findings) return;
        var names = stacks.Locks.Where(l => l.NameKind != "address")
            .Select(l => (Old: $"futex {l.Address} (pid {l.Process})",
                New: $"{l.Name} (futex {l.Address}, pid {l.Process})"))
            .ToList();
        string Rename(string text)
        {
            foreach (var (old, named) in names) text = text.Replace(old, named, StringComparison.Ordinal);
            return text;
        }

        var processOf = report.Threads.GroupBy(t => t.Tid).ToDictionary(g => g.Key, g => g.First().Pid);
        var callSites = report.SectionOf(AnalysisReports.Convoys) is Sections.ConvoySection convoys
            ? convoys.Objects.Where(o => o.CallSite is not null).ToDictionary(o => o.Object, o => o.CallSite!)
            : [];
        report.Findings = findings.Select(f => new Findings.FindingSection
        {
            Kind = f.Kind,
            Severity = f.Severity,
            Title = Rename(f.Title),
            Evidence = f.Evidence,
            Threads = f.Threads,
            Objects = f.Objects,
            Windows = f.Windows,
            Remedy = Rename(f.Remedy),
            Claims = f.Claims,
            Where = f.Where ?? Where(f, stacks, processOf, callSites),
        }).ToList();
    }

    /// <summary>Findings about time on the CPU or waiting for one, where a blocking stack says nothing.</summary>
    private static readonly HashSet<string> NotBlocked =
        ["oversubscription", "cpu-contention", "cross-cpu-wakeups", "priority-preemption"];

    /// <summary>The most user frames a finding's <c>Where</c> names.</summary>
    public const int WhereFrames = 8;

    /// <summary>
    /// The named user frames (innermost first, at most <see cref="WhereFrames"/>) of the off-CPU stack on which the
    /// finding's threads' processes spent the most time blocked, summed over those processes; null without one. For a
    /// finding on a wake chain named by its call site, only stacks through that site's innermost function: the
    /// processes' heaviest wait may be other threads' (a JVM's idle GC threads beside its workers on a monitor).
    /// </summary>
    private static string? Where(Findings.FindingSection f, StacksSection stacks, Dictionary<int, int> processOf,
        Dictionary<string, string> callSites)
    {
        if (f.Threads.Count == 0 || NotBlocked.Contains(f.Kind)) return null;
        var processes = f.Threads.Select(t => processOf.TryGetValue(t, out var p) ? p : t).ToHashSet();
        var site = f.Objects.Select(o => callSites.GetValueOrDefault(o)).FirstOrDefault(c => c is not null);
        var through = site?.Split(" ← ")[0];
        var heaviest = stacks.OffCpu.Where(o => processes.Contains(o.Process))
            .Select(o => (o.Ms, Frames: o.Frames.Where(x => !x.Module.StartsWith("[kernel", StringComparison.Ordinal)
                && x.Symbol is not null).Select(x => x.Symbol!).Take(WhereFrames).ToList()))
            .Where(o => o.Frames.Count > 0 && (through is null || o.Frames.Contains(through)))
            .GroupBy(o => string.Join(" ← ", o.Frames))
            .Select(g => (Where: g.Key, Ms: g.Sum(o => o.Ms)))
            .OrderByDescending(g => g.Ms).ThenBy(g => g.Where, StringComparer.Ordinal).FirstOrDefault();
        return heaviest.Where;
    }

    private static bool IsImplementation(FrameEntry f) =>
        IsLockImplementation(new SymbolFrame(0, f.Module, f.Symbol, 0,
            f.Module == "[kernel.kallsyms]"));

    private static List<StackEntry> Entries(Dictionary<int, StackTotals> totals, StackTable stacks,
        StackSymbolizer symbolizer) =>
        totals.Where(t => t.Key != 0).OrderByDescending(t => t.Value.Nanoseconds).ThenByDescending(t => t.Value.Count)
            .ThenBy(t => t.Key).Select(t => Entry(t.Key, t.Value, stacks, symbolizer)).ToList();

    private static StackEntry Entry(int id, StackTotals totals, StackTable stacks, StackSymbolizer symbolizer) => new()
    {
        Process = stacks.Process(id),
        Count = totals.Count,
        Ms = Ms(totals.Nanoseconds),
        Frames = symbolizer.Stack(stacks, id).Select(Frame).ToList(),
    };

    /// <summary>A named frame as report.json writes it.</summary>
    public static FrameEntry Frame(SymbolFrame f) => new()
    {
        Address = Hex(f.Address),
        Module = f.Module,
        Symbol = f.Symbol,
        Offset = Hex(f.Offset),
        ModuleOffset = f.ModuleOffset == f.Address ? null : Hex(f.ModuleOffset),
        File = f.Source?.File,
        Line = f.Source?.Line,
        Inlined = f.Inlined ? true : null,
    };

    private static double Ms(long ns) => Math.Round(ns / 1e6, 3);

    private static string Hex(ulong v) => "0x" + v.ToString("x", CultureInfo.InvariantCulture);
}
