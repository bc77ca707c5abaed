using System.Globalization;
using TraceLab.Cli;
using TraceLab.Formats;

namespace TraceLab.Tests.Cli;

/// <summary>
/// The managed heap's address range advised for transparent huge pages (docs/performance.md#huge-page-heap): the range
/// found in /proc/self/maps from an object's address, and the kernel's own account of the advice.
/// </summary>
public sealed class HugePageHeapTests
{
    private const string Maps = """
        00400000-04ba5000 r-xp 00000000 fe:00 11657249                           /tmp/tracelab
        7f9292102000-7f9292107000 rw-p 00000000 00:00 0 
        7f9312bfb000-7f9312c3c000 rw-p 00000000 00:00 0 
        7f9312c3c000-7f9313000000 ---p 00000000 00:00 0 
        7f9313000000-7f9313031000 rw-p 00000000 00:00 0 
        7f9313031000-7f9315000000 ---p 00000000 00:00 0 
        7f9316000000-7f9316001000 rw-p 00000000 00:00 0 
        7fd312c3d000-7fd312c3f000 rw-p 00000000 00:00 0                          [heap]
        """;

    private static (ulong, ulong) Run(ulong address, long max = HugePageHeap.MaxBytes)
    {
        var (start, end) = HugePageHeap.AnonymousRunAbove(Maps.Split('\n'), (nuint)address, max);
        return (start, end);
    }

    [Fact]
    public void The_run_starts_at_the_mapping_that_holds_the_address_and_ends_at_the_first_gap()
    {
        // Not the anonymous mapping below (it ends before the run starts); through committed (rw-p) and reserved
        // (---p) mappings alike; not past the gap at 7f9315000000.
        Assert.Equal((0x7f9312bfb000UL, 0x7f9315000000UL), Run(0x7f9312c00010));
        Assert.Equal((0x7f9313000000UL, 0x7f9315000000UL), Run(0x7f9313000000));
        Assert.Equal((0x7f9316000000UL, 0x7f9316001000UL), Run(0x7f9316000fff));
    }

    [Fact]
    public void The_run_is_capped_and_is_empty_outside_anonymous_mappings()
    {
        Assert.Equal((0x7f9312bfb000UL, 0x7f9312bfb000UL + 0x100000), Run(0x7f9312c00010, 0x100000));
        Assert.Equal((0UL, 0UL), Run(0x00500000));         // the executable's text
        Assert.Equal((0UL, 0UL), Run(0x7fd312c3e000));     // [heap]: malloc's, not the collector's
        Assert.Equal((0UL, 0UL), Run(0x7f9315800000));     // in the gap
    }

    [Fact]
    public unsafe void The_kernel_reports_the_heap_mapping_eligible_for_huge_pages()
    {
        const string mode = "/sys/kernel/mm/transparent_hugepage/enabled";
        if (!OperatingSystem.IsLinux() || !File.Exists(mode))
        {
            Assert.Equal((0, 0), HugePageHeap.TryAdvise());
            return;
        }
        var advised = HugePageHeap.TryAdvise();
        if (!File.ReadAllText(mode).Contains("[madvise]", StringComparison.Ordinal))
        {
            // "always" gives huge pages without advice, "never" gives none: nothing to ask for.
            Assert.Equal((0, 0), advised);
            return;
        }
        Assert.True(advised.Advised > 0);
        Assert.Equal(Math.Min(advised.Advised, HugePageHeap.WritableBytes), advised.Writable);
        // The mapping holding a new object is one the advice covered: the kernel marks it hugepage ("hg" in VmFlags),
        // and it covers the whole aligned 2 MiB around the object, so that its first write there faults in a huge page
        // (with the advice alone the collector's committed memory ended just past what was in use). The other tests of
        // this process allocate beside this one: a collection between the advice and the probe may give the memory
        // back and take it again (mapped over: a new mapping, without the advice), or move allocation to a region
        // outside the advised run — so a new advice and probe, up to three times; a build that never covers the
        // object fails all three.
        string? failure = null;
        for (var attempt = 0; attempt < 3; attempt++)
        {
            if (attempt > 0) HugePageHeap.TryAdvise();
            var probe = new byte[64];
            nuint address;
            fixed (byte* p = probe) address = (nuint)p;
            var (start, end, flags) = EntryOf(address);
            GC.KeepAlive(probe);
            const ulong hugePage = 2 << 20;
            var block = (ulong)address & ~(hugePage - 1);
            failure = !flags.Contains("hg")
                ? $"{start:x}-{end:x}, holding {(ulong)address:x}, not advised: {string.Join(' ', flags)}"
                : start <= block && block + hugePage <= end
                    ? null
                    : $"{start:x}-{end:x} does not cover the huge page {block:x} of {(ulong)address:x}";
            if (failure is null) return;
        }
        Assert.Fail(failure);
    }

    [Fact]
    public void The_variable_decides_before_any_measurement_and_light_commands_are_not_measured()
    {
        var measured = 0;
        var advised = 0;
        FreshPageCost.Figures? Measure()
        {
            measured++;
            return new FreshPageCost.Figures(18.6, 9.0);
        }
        (long, long) Advise()
        {
            advised++;
            return (4096L << 20, 512L << 20);
        }

        Assert.Equal(((4096L << 20, 512L << 20), "TRACELAB_HUGE_PAGES=1"), Choose("scenarios", "1"));
        Assert.Equal((((long, long)?)null, "TRACELAB_HUGE_PAGES=0"), Choose("analyze", "0"));
        Assert.Equal((((long, long)?)null, "not measured for this command"), Choose("scenarios", null));
        Assert.Equal((((long, long)?)null, "not measured for this command"), Choose(null, "yes"));
        Assert.Equal((0, 1), (measured, advised));
        // A trace command: measured, and here huge pages are the cheaper (9 µs per 4 KiB against 18.6).
        Assert.Equal(((4096L << 20, 512L << 20),
            "new memory here: 18.6 µs a 4 KiB page, 9.0 µs per 4 KiB of a huge page"), Choose("analyze", null));
        Assert.Equal((1, 2), (measured, advised));

        ((long, long)? Advice, string Why) Choose(string? command, string? variable) =>
            HugePageHeap.Choose(command, variable, Measure, Advise);
    }

    [Theory]
    // The two hosts of docs/performance.md#huge-pages-measured: a VM handing free 2 MiB blocks back (huge pages
    // dearer) and a paravirtual one whose page-table updates cost (huge pages cheaper).
    [InlineData(2.1, 12.6, false)]
    [InlineData(18.6, 9.0, true)]
    // A VM that hands free memory back, whose one huge page timed came from a block just freed (0.5 µs) while most of
    // the run's cost 10-26 µs per 4 KiB (docs/performance.md#huge-pages-cold): 4 KiB pages this cheap are kept.
    [InlineData(3.3, 0.5, false)]
    [InlineData(7.9, 0.5, false)]
    [InlineData(8.0, 0.5, true)]
    // Within the timing's spread of each other, or no huge page given (each 4 KiB of the block faulted alone): not
    // worth the partly used huge page at each region's end.
    [InlineData(10.0, 8.0, false)]
    [InlineData(10.0, 7.5, true)]
    public void Huge_pages_are_chosen_only_when_clearly_cheaper(double small, double huge, bool chosen)
    {
        Assert.Equal(chosen, new FreshPageCost.Figures(small, huge).PreferHugePages);
        // Not timed (4 KiB pages cheap): never chosen.
        Assert.False(new FreshPageCost.Figures(small, null).PreferHugePages);
    }

    [Fact]
    public void New_memory_is_timed_where_linux_gives_huge_pages_on_request()
    {
        const string mode = "/sys/kernel/mm/transparent_hugepage/enabled";
        var figures = FreshPageCost.Measure();
        if (!OperatingSystem.IsLinux() || !File.Exists(mode)
            || !File.ReadAllText(mode).Contains("[madvise]", StringComparison.Ordinal))
        {
            Assert.Null(figures);
            return;
        }
        Assert.NotNull(figures);
        var (small, huge) = (figures.Value.SmallPageMicroseconds, figures.Value.HugePageMicroseconds);
        // A new page costs something (a fault), and not a millisecond.
        Assert.InRange(small, 0.01, 1000);
        Assert.Equal(small >= FreshPageCost.CheapSmallPageMicroseconds, huge is not null);
        if (huge is { } h) Assert.InRange(h, 0.001, 1000);
    }

    /// <summary>The range and VmFlags of the /proc/self/smaps entry holding <paramref name="address"/>.</summary>
    private static (ulong Start, ulong End, string[] Flags) EntryOf(nuint address)
    {
        ulong start = 0, end = 0;
        var inside = false;
        foreach (var line in File.ReadLines("/proc/self/smaps"))
        {
            var first = line.Split(' ', 2)[0];
            if (first.EndsWith(':'))
            {
                if (inside && first == "VmFlags:")
                    return (start, end, line["VmFlags:".Length..].Split(' ', StringSplitOptions.RemoveEmptyEntries));
                continue;
            }
            // An entry's first line: "start-end perms offset dev inode path".
            var range = first.Split('-');
            start = ulong.Parse(range[0], NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture);
            end = ulong.Parse(range[1], NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture);
            inside = start <= address && address < end;
        }
        return (0, 0, []);
    }
}
