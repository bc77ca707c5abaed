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
/// </remarks>
internal static unsafe class HugePageHeap
{
    /// <summary>How much of the reservation above the heap's first object is advised: far more than one analysis
    /// commits, far less than the 256 GiB the collector reserves.</summary>
    public const long MaxBytes = 4L << 30;

    /// <summary>
    /// Advises the heap's range; the bytes advised (0: not Linux, huge pages never given, the range not found, or
    /// madvise refused — the heap then uses 4 KiB pages as before).
    /// </summary>
    public static long TryAdvise()
    {
        if (!TransparentHugePages.GivenOnRequest()) return 0;
        try
        {
            var probe = new byte[64];
            nuint address;
            fixed (byte* p = probe) address = (nuint)p;
            var (start, end) = AnonymousRunAbove(File.ReadLines("/proc/self/maps"), address, MaxBytes);
            GC.KeepAlive(probe);
            if (end <= start) return 0;
            return TransparentHugePages.Advise((void*)start, end - start) ? (long)(end - start) : 0;
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return 0;
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
