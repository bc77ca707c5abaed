using TraceLab.Formats;

namespace TraceLab.Cli;

/// <summary>
/// Asks Linux for transparent huge pages under the managed heap (madvise MADV_HUGEPAGE on the garbage collector's
/// address range), where the system gives them on request only (the default "madvise" mode of
/// /sys/kernel/mm/transparent_hugepage/enabled): docs/performance.md#huge-page-heap.
/// </summary>
/// <remarks>
/// A run of `analyze` writes ~70 MB of heap once: its pass state, then the report. Each 4 KiB page of it is a page
/// fault when first written, and on the virtual machines we measure on a fault of fresh memory costs ~11 µs (a C
/// program writing 64 MiB of new memory: 180 ms in 4 KiB pages, 5.5 ms in 2 MiB pages); those faults were about a
/// fifth of the busy perf.data's `analyze` CPU time, a share of them on the analysis thread, the pass's critical path.
/// In 2 MiB pages the same memory takes 1/512 of the faults. The runtime has no setting for this (its large-pages
/// option needs hugetlbfs and a hard heap limit), so the range is found in /proc/self/maps from an object just
/// allocated: the mapping that holds it, and the mappings that continue it upward without a gap (the rest of the
/// collector's reservation, where it commits new regions), at most <see cref="MaxBytes"/>. Memory-wise the heap is
/// written from the bottom of each region up, so at most one partly used 2 MiB page per region in use is added (peak
/// RSS of the busy perf.data unchanged, 117 → 118 MiB with every mapping in huge pages).
/// <para>Whether the heap asks for them is measured on each machine (<see cref="Choose(string?)"/>). Since the
/// thirty-second session it had asked only with <see cref="Variable"/>=1 (docs/performance.md#huge-pages-opt-in):
/// on the VMs measured then a new huge page cost 12.6 µs per 4 KiB against 2 µs for a 4 KiB page, and `analyze` was
/// slower with them (0.77 → 0.86 s); on the host of the thirty-seventh session the figures were 9 against 18.6 µs,
/// and `analyze` faster with them (0.66 → 0.49 s): docs/performance.md#huge-pages-measured. Since the fortieth
/// session a huge page is timed only where a 4 KiB page costs 8 µs or more: on a VM that hands free memory back the one
/// timed came from a block just freed and measured cheap while most of the run's did not (`analyze` 0.38 s in 4 KiB
/// pages, 0.41 s median and 0.49 s mean in huge ones): docs/performance.md#huge-pages-cold.</para>
/// </remarks>
internal static unsafe class HugePageHeap
{
    /// <summary>The environment variable that decides instead of the measurement: "1" huge pages, "0" 4 KiB pages.
    /// </summary>
    public const string Variable = "TRACELAB_HUGE_PAGES";

    /// <summary>The commands that read or write a trace: the others run too briefly for the heap's pages to matter,
    /// and are not given the measurement's few milliseconds.</summary>
    private static readonly string[] TraceCommands = ["analyze", "bench", "export", "trace", "sweep", "overhead"];

    /// <summary>
    /// Decides the heap's pages for a run of <paramref name="command"/> (the first argument) and, for huge pages,
    /// advises the heap (<see cref="TryAdvise"/>): <see cref="Variable"/> when set, else what new memory costs here
    /// (<see cref="FreshPageCost"/>, timed for the trace commands only).
    /// </summary>
    /// <returns>What <see cref="TryAdvise"/> did (null: 4 KiB pages chosen) and why, for the stage lines.</returns>
    public static ((long Advised, long Writable)? Advice, string Why) Choose(string? command)
    {
        var choice = Choose(command, Environment.GetEnvironmentVariable(Variable), FreshPageCost.Measure, TryAdvise);
        Chosen = Summarize(choice);
        // The readers' buffers follow the heap: huge pages only where they were chosen
        // (docs/performance.md#window-steps).
        ReadBuffers.HugePages = choice.Advice is not null;
        return choice;
    }

    /// <summary>
    /// What <see cref="Choose(string?)"/> chose for this process, in a few words (<see cref="Summarize"/>); null before
    /// it ran. `bench` prints it: its figures depend on it (docs/performance.md#huge-pages-cold).
    /// </summary>
    public static string? Chosen { get; private set; }

    /// <summary>A choice in a few words: the pages the heap is in, and why.</summary>
    public static string Summarize(((long Advised, long Writable)? Advice, string Why) choice) => choice.Advice switch
    {
        null => $"4 KiB pages ({choice.Why})",
        { Advised: > 0 } => $"transparent huge pages ({choice.Why})",
        _ => $"4 KiB pages, the huge pages chosen not given ({choice.Why})",
    };

    /// <summary><see cref="Choose(string?)"/> with the variable's value, the measurement and the advice given.
    /// </summary>
    public static ((long Advised, long Writable)? Advice, string Why) Choose(string? command, string? variable,
        Func<FreshPageCost.Figures?> measure, Func<(long Advised, long Writable)> advise)
    {
        if (variable is "1" or "0")
            return (variable == "1" ? advise() : null, $"{Variable}={variable}");
        if (command is null || !TraceCommands.Contains(command, StringComparer.Ordinal))
            return (null, "not measured for this command");
        if (measure() is not { } figures)
            return (null, "not timed: the system gives no huge pages on request, or refused the memory");
        return (figures.PreferHugePages ? advise() : null, Describe(figures));
    }

    /// <summary>The measurement, as the stage line says it.</summary>
    public static string Describe(FreshPageCost.Figures figures)
    {
        var inv = System.Globalization.CultureInfo.InvariantCulture;
        var huge = figures.HugePageMicroseconds is { } h
            ? string.Create(inv, $"{h:F1} µs per 4 KiB of a huge page")
            : "cheap enough that huge pages were not timed";
        return string.Create(inv, $"new memory here: {figures.SmallPageMicroseconds:F1} µs a 4 KiB page, {huge}");
    }

    /// <summary>How much of the reservation above the heap's first object is advised: far more than one analysis
    /// commits, far less than the 256 GiB the collector reserves.</summary>
    public const long MaxBytes = 4L << 30;

    /// <summary>
    /// How much of the advised range, from its start, is made one writable mapping ahead of the collector: more than
    /// an analysis commits (the busy perf.data's ~120 MiB peak), nothing allocated until written.
    /// </summary>
    public const long WritableBytes = 512L << 20;

    /// <summary>
    /// Advises the heap's range, and makes its first <see cref="WritableBytes"/> writable: the collector commits its
    /// memory a little at a time (mprotect, then madvise MADV_DODUMP), which leaves the committed part a mapping of its
    /// own that ends just past what is in use, and Linux gives a fault a huge page only where the mapping covers the
    /// whole aligned 2 MiB around it — with the advice alone, most of the heap still came in 4 KiB pages (12 of the 14
    /// MiB in use mid-pass). Made writable and dumpable in one call, the range is one mapping whatever the collector
    /// commits in it later (its own calls then change nothing), and its pages come as 2 MiB ones. Nothing the
    /// collector relies on changes: pages it has not committed are never written and read as zeros, as it expects of
    /// memory it commits, and it decommits by mapping over them.
    /// </summary>
    /// <returns>The bytes advised and the bytes of those made writable (0, 0: not Linux, huge pages never given, the
    /// range not found, or madvise refused — the heap then uses 4 KiB pages as before).</returns>
    public static (long Advised, long Writable) TryAdvise()
    {
        if (!TransparentHugePages.GivenOnRequest()) return (0, 0);
        try
        {
            var probe = new byte[64];
            nuint address;
            fixed (byte* p = probe) address = (nuint)p;
            var (start, end) = AnonymousRunAbove(File.ReadLines("/proc/self/maps"), address, MaxBytes);
            GC.KeepAlive(probe);
            if (end <= start || !TransparentHugePages.Advise((void*)start, end - start)) return (0, 0);
            var writable = Math.Min(end - start, (nuint)WritableBytes);
            return ((long)(end - start),
                TransparentHugePages.MakeWritable((void*)start, writable) ? (long)writable : 0);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return (0, 0);
        }
    }

    /// <summary>
    /// In /proc/PID/maps lines (ascending), the anonymous mapping holding <paramref name="address"/> and those after it
    /// that continue it without a gap, capped at <paramref name="maxBytes"/> from its start; (0, 0) when the address is
    /// in no anonymous mapping.
    /// </summary>
    public static (nuint Start, nuint End) AnonymousRunAbove(IEnumerable<string> maps, nuint address, long maxBytes)
    {
        nuint start = 0, end = 0;
        foreach (var line in maps)
        {
            if (!ProcMapsLine.TryParse(line, out var first, out var past, out var path)) continue;
            var (from, to, anonymous) = ((nuint)first, (nuint)past, path.Length == 0);
            if (end == 0)
            {
                if (address < from || address >= to) continue;
                if (!anonymous) return (0, 0);
                (start, end) = (from, to);
            }
            else if (from == end && anonymous) end = to;
            else break;
            if (end - start >= (nuint)maxBytes) return (start, start + (nuint)maxBytes);
        }
        return (start, end);
    }
}
