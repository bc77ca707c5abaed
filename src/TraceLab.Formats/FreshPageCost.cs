using System.Diagnostics;

namespace TraceLab.Formats;

/// <summary>
/// What new memory costs on this machine, measured in a few milliseconds: the time to write a byte in each page of
/// new anonymous memory, in 4 KiB pages and in one transparent huge page (2 MiB), each per 4 KiB
/// (docs/performance.md#huge-pages-measured). The managed heap is put in huge pages when they are clearly cheaper.
/// </summary>
/// <remarks>
/// Neither kind wins everywhere. On bare metal a new page costs well under a microsecond either way. On the 2-vCPU VMs
/// we measure on it has ranged from 2 µs (4 KiB) against 12.6 µs (per 4 KiB of a huge page: the VM hands every free 2
/// MiB block back to its host, and each comes back at a host fault per 4 KiB) to 18.6 µs against 9 µs (a paravirtual
/// host whose page-table updates are the cost) — and `analyze` followed: the heap in huge pages made it 0.77 → 0.86 s
/// on the first host and 0.66 → 0.49 s on the second, and 0.35 → 0.49 s on a third whose one huge page timed cheap
/// (<see cref="CheapSmallPageMicroseconds"/>). What the host does is not visible from inside, so the 4 KiB pages are
/// timed, and a huge page too where those are dear.
/// </remarks>
public static unsafe class FreshPageCost
{
    private const int SmallPage = 4096;
    private const int HugePage = 2 << 20;

    /// <summary>4 KiB pages written for the first figure: enough to average out the first fault's page-table setup.
    /// </summary>
    private const int SmallPages = 128;

    /// <summary>
    /// Below this a new 4 KiB page is cheap enough that huge pages are not worth their risk, and the huge page is not
    /// timed. Where the VM hands free memory back to its host (free page reporting), a huge page from a block the host
    /// took back costs 10-26 µs per 4 KiB (the host backs it again), one from a block the previous process just freed
    /// 0.5 µs: the one huge page timed here cannot tell which most of the run's will be. On such a host (4 KiB pages
    /// 2.1-3.4 µs) the single page measured 0.5 µs and chose huge pages, and `analyze` of the busy perf.data took 0.49
    /// s against 0.35 s in 4 KiB pages (docs/performance.md#huge-pages-cold). Where 4 KiB pages cost more than even a
    /// huge page taken back (14-24 µs on a paravirtual host whose page-table updates are the cost), huge pages are
    /// timed and chosen when clearly cheaper. Timing one also costs what it measures: 2 MiB of new memory, 1-13 ms.
    /// </summary>
    public const double CheapSmallPageMicroseconds = 8.0;

    /// <summary>Huge pages are chosen when a 4 KiB of one costs at most this share of a 4 KiB page: clearly cheaper,
    /// not within the timing's spread, and paying for the partly used huge page at the end of each heap region.
    /// </summary>
    public const double HugePageShare = 0.75;

    /// <summary>Microseconds per new 4 KiB page; per 4 KiB of a new huge page (null: not timed, or none given).
    /// </summary>
    public readonly record struct Figures(double SmallPageMicroseconds, double? HugePageMicroseconds)
    {
        /// <summary>Whether the heap should ask for huge pages on this machine.</summary>
        public bool PreferHugePages =>
            HugePageMicroseconds is { } huge && SmallPageMicroseconds >= CheapSmallPageMicroseconds
            && huge <= HugePageShare * SmallPageMicroseconds;
    }

    /// <summary>
    /// Times new memory in 4 KiB pages and, unless those are cheap, in a huge page; null where that cannot be done
    /// (not Linux, the system gives no huge pages on request, or the memory was refused).
    /// </summary>
    public static Figures? Measure()
    {
        if (!TransparentHugePages.GivenOnRequest()) return null;
        var small = TimeWrites(SmallPages * SmallPage, hugePages: false);
        if (small is not { } smallUs) return null;
        if (smallUs < CheapSmallPageMicroseconds) return new Figures(smallUs, null);
        return new Figures(smallUs, TimeWrites(HugePage, hugePages: true));
    }

    /// <summary>
    /// Maps <paramref name="bytes"/> of new memory (2 MiB-aligned, advised for huge pages when asked), writes a byte
    /// of each 4 KiB page, unmaps it: microseconds per 4 KiB page, or null when the memory was refused.
    /// </summary>
    private static double? TimeWrites(int bytes, bool hugePages)
    {
        // Twice the size, so that an aligned block of it lies inside: a huge page needs its whole aligned 2 MiB mapped.
        var length = (nuint)(2 * Math.Max(bytes, HugePage));
        var mapped = TransparentHugePages.MapNew(length);
        if (mapped is null) return null;
        try
        {
            var block = (byte*)(((nuint)mapped + HugePage - 1) & ~(nuint)(HugePage - 1));
            if (hugePages && !TransparentHugePages.Advise(block, (nuint)bytes)) return null;
            var start = Stopwatch.GetTimestamp();
            for (var offset = 0; offset < bytes; offset += SmallPage) block[offset] = 1;
            var elapsed = Stopwatch.GetElapsedTime(start);
            return elapsed.TotalMicroseconds / (bytes / SmallPage);
        }
        finally
        {
            TransparentHugePages.Unmap(mapped, length);
        }
    }
}
