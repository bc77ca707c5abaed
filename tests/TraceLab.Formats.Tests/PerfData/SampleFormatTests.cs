using TraceLab.Formats.PerfData;
using static TraceLab.Formats.PerfData.PerfSampleType;

namespace TraceLab.Formats.Tests.PerfData;

/// <summary>
/// Where the scan finds each sample's tid without looking its layout up (<see cref="SampleFormat.UniformTidOffset"/>):
/// perf record adds a dummy event (no raw data) to the tracepoints, so a file's layouts differ while the pid/tid pair
/// sits at one place in all of them; the scan compares it in place on every sample.
/// </summary>
public sealed class SampleFormatTests
{
    private const ulong Tracepoint = Ip | Tid | Time | Cpu | Period | Raw | Identifier;
    private const ulong Dummy = Ip | Tid | Time | Cpu | Identifier;

    private static PerfEventAttr Attr(ulong sampleType, params ulong[] ids) =>
        new(PerfEventAttr.TracepointType, 1, sampleType, PerfReadFormat.Id | PerfReadFormat.Lost, true, ids);

    /// <summary>As the reader makes it: the first attribute that records raw data leads.</summary>
    private static SampleFormat Format(params PerfEventAttr[] attrs) =>
        new(attrs, attrs.First(a => (a.SampleType & Raw) != 0), "test.perf.data");

    [Fact]
    public void Layouts_that_differ_elsewhere_but_agree_on_the_tid_have_one_tid_offset()
    {
        // IDENTIFIER (8 bytes), IP (8), then pid and tid: what perf record -a writes for tracepoints and its dummy.
        Assert.Equal(16, Format(Attr(Dummy, 1), Attr(Tracepoint, 2, 3), Attr(Tracepoint, 4)).UniformTidOffset);
        Assert.Equal(16, Format(Attr(Tracepoint, 2)).UniformTidOffset);
    }

    [Fact]
    public void A_layout_with_the_tid_elsewhere_or_without_it_leaves_the_lookup_per_sample()
    {
        Assert.Equal(-1, Format(Attr(Tracepoint, 1), Attr(Tracepoint & ~Ip, 2)).UniformTidOffset);
        Assert.Equal(-1, Format(Attr(Tracepoint, 1), Attr(Tracepoint & ~Tid, 2)).UniformTidOffset);
        Assert.Equal(-1, Format(Attr(Tracepoint & ~Tid)).UniformTidOffset);
    }
}
