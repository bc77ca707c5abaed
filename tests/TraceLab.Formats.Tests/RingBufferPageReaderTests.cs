using TraceLab.Core;
using TraceLab.Formats.Ftrace;

namespace TraceLab.Formats.Tests;

public class RingBufferPageReaderTests
{
    private static readonly HeaderPageLayout Layout = HeaderPageLayout.Default64;

    private static List<(ulong Ts, byte[] Payload)> ReadAll(byte[] page)
    {
        var list = new List<(ulong, byte[])>();
        var r = new RingBufferPageReader(page, Layout);
        while (r.TryReadNext(out var ts, out var payload)) list.Add((ts, payload.ToArray()));
        return list;
    }

    [Fact]
    public void DecodesDeltasTimeExtendsAndAbsoluteStamps()
    {
        var p1 = new byte[] { 1, 2, 3, 4, 5, 6, 7, 8 };
        var p2 = new byte[] { 9, 9, 9, 9 };
        var page = new PageBuilder(1_000_000)
            .Data(10, p1)
            .TimeExtend(1UL << 30)
            .Data(5, p2)
            .AbsoluteStamp(5_000_000_000)
            .Data(7, p1)
            .Build();

        var records = ReadAll(page);

        Assert.Equal(3, records.Count);
        Assert.Equal(1_000_010UL, records[0].Ts);
        Assert.Equal(p1, records[0].Payload);
        Assert.Equal(1_000_010UL + (1UL << 30) + 5, records[1].Ts);
        Assert.Equal(p2, records[1].Payload);
        Assert.Equal(5_000_000_007UL, records[2].Ts);
    }

    [Fact]
    public void TypeLenZeroRecordsCarryTheirLengthInArrayZero()
    {
        var big = Enumerable.Range(0, 200).Select(i => (byte)i).ToArray();
        var small = new byte[] { 1, 2, 3, 4, 5, 6 };
        var page = new PageBuilder(100).Data(1, big).Data(2, small, forceLengthWord: true).Build();

        var records = ReadAll(page);

        Assert.Equal(2, records.Count);
        Assert.Equal(101UL, records[0].Ts);
        Assert.Equal(big, records[0].Payload);
        Assert.Equal(103UL, records[1].Ts);
        Assert.Equal(small, records[1].Payload);
    }

    [Fact]
    public void DiscardedEventsAreSkippedAndTailPaddingEndsThePage()
    {
        var p = new byte[] { 1, 0, 0, 0 };
        var b = new PageBuilder(0).Data(1, p).Discarded(4, 12).Data(2, p).TailPadding();
        var page = b.Build(commitOverride: b.Length + 64);

        var records = ReadAll(page);

        Assert.Equal(new ulong[] { 1, 7 }, records.Select(r => r.Ts).ToArray());
    }

    [Fact]
    public void AbsoluteStampTakesUpperBitsFromTheRunningTime()
    {
        const ulong upper = 0x08UL << 56; // bit 59 set: above the 59 bits an absolute stamp carries
        var page = new PageBuilder(upper | 500).AbsoluteStamp(1000).Data(0, new byte[4]).AbsoluteStamp(100)
            .Data(0, new byte[4]).Build();

        var records = ReadAll(page);

        Assert.Equal(upper | 1000, records[0].Ts);
        // A lower value than the running time means the low 59 bits wrapped.
        Assert.Equal((upper | 100) + (1UL << 59), records[1].Ts);
    }

    [Fact]
    public void ExposesMissedEventFlagsAndStoredCount()
    {
        var b = new PageBuilder(42).Data(1, new byte[8]);
        var page =
            b.Build(RingBufferPageReader.MissedEventsFlag | RingBufferPageReader.MissedStoredFlag, storedMissed: 1234);

        var r = new RingBufferPageReader(page, Layout);

        Assert.Equal(42UL, r.PageTimestamp);
        Assert.Equal(b.Length, r.CommitLength);
        Assert.True(r.MissedEvents);
        Assert.True(r.MissedEventsStored);
        Assert.Equal(1234, r.MissedEventCount);
        Assert.True(r.TryReadNext(out var ts, out _));
        Assert.Equal(43UL, ts);
        Assert.False(r.TryReadNext(out _, out _));
    }

    [Fact]
    public void MissedWithoutStoredCountReportsUnknown()
    {
        var page = new PageBuilder(1).Data(1, new byte[4]).Build(RingBufferPageReader.MissedEventsFlag);
        var r = new RingBufferPageReader(page, Layout);
        Assert.True(r.MissedEvents);
        Assert.False(r.MissedEventsStored);
        Assert.Equal(-1, r.MissedEventCount);
    }

    [Fact]
    public void EmptyPageHasNoRecords()
    {
        Assert.Empty(ReadAll(new PageBuilder(7).Build()));
    }

    [Fact]
    public void CommitBeyondPageThrows()
    {
        var page = new PageBuilder(0).Build(commitOverride: 5000);
        var ex = Assert.Throws<TraceFormatException>(() => new RingBufferPageReader(page, Layout, "x.raw", 8192));
        Assert.Equal("x.raw", ex.File);
        Assert.Equal(8192 + 8, ex.Offset);
    }

    [Fact]
    public void RecordLongerThanCommitThrows()
    {
        // type_len 28 = 112 bytes of payload, but only 8 bytes committed.
        var page = new PageBuilder(0).Raw(28).Raw(0).Build();
        var ex = Assert.Throws<TraceFormatException>(() => ReadAll(page));
        Assert.Equal(16, ex.Offset);
    }

    [Fact]
    public void HugeTypeLenZeroLengthThrows()
    {
        var page = new PageBuilder(0).Raw(0).Raw(0xFFFFFFF0).Build();
        Assert.Throws<TraceFormatException>(() => ReadAll(page));
    }

    [Fact]
    public void TypeLenZeroLengthBelowFourThrows()
    {
        var page = new PageBuilder(0).Raw(0).Raw(2).Build();
        Assert.Throws<TraceFormatException>(() => ReadAll(page));
    }

    [Fact]
    public void TruncatedTimeExtendThrows()
    {
        var b = new PageBuilder(0).Raw(30);
        var page = b.Build();
        Assert.Throws<TraceFormatException>(() => ReadAll(page));
    }

    [Fact]
    public void ShortPageThrows()
    {
        Assert.Throws<TraceFormatException>(() => new RingBufferPageReader(new byte[10], Layout));
    }

    [Fact]
    public void RandomGarbageNeverEscapesAsAnotherException()
    {
        var rng = new Random(1234);
        // How far each page got: refused by the header check, or into the record walk, and how that walk ended.
        int refusedAtHeader = 0, walked = 0, withRecords = 0, refusedInWalk = 0;
        for (var i = 0; i < 2000; i++)
        {
            var page = new byte[4096];
            rng.NextBytes(page);
            // Keep some commits plausible so the record walk itself gets exercised.
            if (i % 2 == 0) BitConverter.TryWriteBytes(page.AsSpan(8), (ulong)rng.Next(0, 4081));
            RingBufferPageReader r;
            try
            {
                r = new RingBufferPageReader(page, Layout);
            }
            catch (TraceFormatException)
            {
                refusedAtHeader++;
                continue;
            }
            walked++;
            var n = 0;
            try
            {
                while (r.TryReadNext(out _, out _)) Assert.True(++n < 2000);
            }
            catch (TraceFormatException)
            {
                refusedInWalk++;
            }
            if (n > 0) withRecords++;
        }
        // Pages with a plausible commit (every other one) must reach the decoder and yield records; random records
        // must also be refused there, or the walk never met a malformed record.
        Assert.Equal(2000, refusedAtHeader + walked);
        Assert.True(walked >= 1000, $"{walked} of 2000 pages reached the record walk");
        Assert.True(withRecords >= 500, $"{withRecords} pages yielded a record");
        Assert.True(refusedInWalk >= 100, $"{refusedInWalk} pages were refused inside the record walk");
    }
}
