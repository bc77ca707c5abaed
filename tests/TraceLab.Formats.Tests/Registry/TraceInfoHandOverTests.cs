using TraceLab.Core;
using TraceLab.Formats.Registry;

namespace TraceLab.Formats.Tests.Registry;

/// <summary>
/// A reader's <see cref="IKernelTraceReader.Info"/> is never written to once handed out: what the header says before
/// the read stays as it was, and the read hands over a new, complete value with what only the events tell.
/// </summary>
public sealed class TraceInfoHandOverTests
{
    [Theory]
    [InlineData("timemutex-cs/trace.dat")]
    [InlineData("perf-timemutex-mutex/capture.perf.data")]
    public void The_info_before_the_read_is_left_as_it_was_and_the_read_hands_over_a_complete_one(string sample)
    {
        using var reader = TraceFormats.All.Open(Path.Combine(RepoPaths.SampleTraces, sample));
        var opened = reader.Info;
        var header = opened with { };
        var events = 0L;
        reader.Read(new CountingSink(() => events++));

        var read = reader.Info;
        Assert.NotSame(opened, read);
        Assert.Equal(header, opened);
        Assert.Equal(0, opened.EventCount);
        Assert.Equal(events, read.EventCount);
        Assert.True(read.FirstTimestamp > 0 && read.LastTimestamp >= read.FirstTimestamp);
        // What the header said is carried over unchanged.
        Assert.Equal((opened.Backend, opened.TraceFile, opened.KernelRelease, opened.TraceClock),
            (read.Backend, read.TraceFile, read.KernelRelease, read.TraceClock));
    }

    [ExternalTraceFact("etw/perfview_net452_x64.etl.zip")]
    public void An_etl_reader_hands_over_a_complete_info_too()
    {
        using var reader = TraceFormats.All.Open(ExternalTraces.PathOf("etw/perfview_net452_x64.etl.zip"));
        var opened = reader.Info;
        var events = 0L;
        reader.Read(new CountingSink(() => events++));
        Assert.Equal(0, opened.EventCount);
        Assert.Equal(events, reader.Info.EventCount);
    }

    private sealed class CountingSink(Action seen) : IKernelEventSink
    {
        public void OnEvent(in KernelEvent e) => seen();
    }
}
