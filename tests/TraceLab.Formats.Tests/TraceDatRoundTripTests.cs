using System.Text;
using TraceLab.Core;
using TraceLab.Formats.Ftrace;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Formats.Tests;

public sealed class TraceDatRoundTripTests : IDisposable
{
    private static readonly int[] ExpectedCpus = [0, 1, 0, 0, 1];
    private readonly string _dir = Directory.CreateTempSubdirectory("tracelab-fmt-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    internal sealed class ListSink : IKernelEventSink
    {
        public List<KernelEvent> Events { get; } = new();
        public void OnEvent(in KernelEvent e) => Events.Add(e);
    }

    internal sealed class CountingSink : IKernelEventSink
    {
        public long Switches;
        public long All;
        public void OnEvent(in KernelEvent e)
        {
            All++;
            if (e.Kind == KernelEventKind.Switch) Switches++;
        }
    }

    private static TraceDatContents Contents()
    {
        var c = new TraceDatContents
        {
            HeaderPage = TestData.Resource("header_page"),
            HeaderEvent = TestData.Resource("header_event")
        };
        foreach (var (system, text) in TestData.AllFormats())
        {
            if (system == "ftrace") c.FtraceFormats.Add(text);
            else c.AddEventFormat(system, text);
        }

        c.SavedCmdlines = "10 worker\n20 other\n";
        c.TraceClock = "mono";
        c.Uname = "Linux testhost 6.18.0-test x86_64";
        return c;
    }

    private static byte[] Switch(int prev, int next) =>
        KernelEventDecoderTests.Payload(TestData.Format("sched", "sched_switch"), prev,
            w => w.Comm("prev_comm", $"t{prev}").Int("prev_pid", prev).Int("prev_state", 1)
                .Comm("next_comm", $"t{next}").Int("next_pid", next));

    private static byte[] Marker(int pid, string text) =>
        KernelEventDecoderTests.Payload(TestData.Format("ftrace", "print"), pid, w => w.Tail(text));

    private string WriteCpu(int cpu, params byte[][] pages)
    {
        var path = Path.Combine(_dir, $"cpu{cpu}.raw");
        File.WriteAllBytes(path, pages.SelectMany(p => p).ToArray());
        return path;
    }

    private string WriteSample()
    {
        var c = Contents();
        c.CpuDataFiles.Add(WriteCpu(0,
            new PageBuilder(1000).Data(0, Switch(10, 20)).Data(200, Marker(20, "hello\n")).Build(),
            new PageBuilder(5000).Data(0, Switch(20, 10)).Build(RingBufferPageReader.MissedEventsFlag)));
        c.CpuDataFiles.Add(WriteCpu(1,
            new PageBuilder(1100).Data(0, Switch(30, 0)).TimeExtend(1UL << 28).Data(0, Switch(0, 30)).Build()));
        c.CpuStats.Add("entries: 0\noverrun: 3\ncommit overrun: 0\nbytes: 0\ndropped events: 2\nread events: 4\n");
        c.CpuStats.Add("entries: 0\noverrun: 0\ncommit overrun: 0\nbytes: 0\ndropped events: 7\nread events: 2\n");
        var path = Path.Combine(_dir, "out.dat");
        TraceDatWriter.Write(path, c);
        return path;
    }

    [Fact]
    public void WrittenFileReadsBackInTimestampOrder()
    {
        var path = WriteSample();
        using var reader = TraceDatReader.Open(path);
        var sink = new ListSink();
        reader.Read(sink);

        var ev = sink.Events;
        Assert.Equal(new long[] { 1000, 1100, 1200, 5000, 1100 + (1L << 28) }, ev.Select(e => e.Timestamp).ToArray());
        Assert.Equal(ExpectedCpus, ev.Select(e => e.Cpu).ToArray());
        Assert.Equal(KernelEventKind.Marker, ev[2].Kind);
        Assert.Equal("hello", ev[2].Text);
        Assert.Equal((10, 20), (ev[0].PrevTid, ev[0].NextTid));

        var info = reader.Info;
        Assert.Equal("tracefs", info.Backend);
        Assert.Equal(2, info.CpuCount);
        Assert.Equal(5, info.EventCount);
        Assert.Equal(1000, info.FirstTimestamp);
        Assert.Equal(1100 + (1L << 28), info.LastTimestamp);
        Assert.Equal("mono", info.TraceClock);
        Assert.Equal("6.18.0-test", info.KernelRelease);
        Assert.Equal(new long[] { 5, 7 }, info.LostEventsPerCpu);
        Assert.Equal(new long[] { 1, 0 }, info.PagesWithMissedEvents);
        Assert.Equal("t30", reader.Threads.NameOf(30));
        Assert.Equal(6, reader.FileVersion);
    }

    [Fact]
    public void CpuDataIsPageAligned()
    {
        var path = WriteSample();
        var bytes = File.ReadAllBytes(path);
        Assert.Equal(0, bytes.Length % 4096);
    }

    [Fact]
    public void WriterRejectsPartialPages()
    {
        var c = Contents();
        var raw = Path.Combine(_dir, "short.raw");
        File.WriteAllBytes(raw, new byte[100]);
        c.CpuDataFiles.Add(raw);
        Assert.Throws<ArgumentException>(() => TraceDatWriter.Write(Path.Combine(_dir, "x.dat"), c));
    }

    [Fact]
    public void EveryTruncationThrowsTraceFormatException()
    {
        var full = File.ReadAllBytes(WriteSample());
        var cut = Path.Combine(_dir, "cut.dat");
        var rng = new Random(7);
        var lengths = Enumerable.Range(0, 120).Select(_ => rng.Next(0, full.Length))
            .Concat(new[] { 0, 5, 11, full.Length - 1, full.Length - 4096 });
        foreach (var len in lengths)
        {
            File.WriteAllBytes(cut, full.AsSpan(0, len).ToArray());
            var ex = Assert.Throws<TraceFormatException>(() =>
            {
                using var r = TraceDatReader.Open(cut);
                r.Read(new CountingSink());
            });
            Assert.Contains("cut.dat", ex.Message, StringComparison.Ordinal);
        }
    }

    [Fact]
    public void CorruptBytesNeverEscapeAsOtherExceptions()
    {
        var full = File.ReadAllBytes(WriteSample());
        var bad = Path.Combine(_dir, "bad.dat");
        var rng = new Random(99);
        // How far each variant got: refused while opening (headers), refused while decoding the CPU data, or read
        // to the end with events delivered.
        int refusedAtOpen = 0, refusedInData = 0, readWithEvents = 0, readEmpty = 0;
        for (var i = 0; i < 300; i++)
        {
            var copy = (byte[])full.Clone();
            for (var k = 0; k < 4; k++) copy[rng.Next(copy.Length)] = (byte)rng.Next(256);
            // Also target length fields of the header area, where a bad value would drive a huge allocation.
            copy[rng.Next(10, 400)] = 0xFF;
            File.WriteAllBytes(bad, copy);
            TraceDatReader r;
            try
            {
                r = TraceDatReader.Open(bad);
            }
            catch (TraceFormatException)
            {
                refusedAtOpen++;
                continue;
            }
            using (r)
            {
                var sink = new CountingSink();
                try
                {
                    r.Read(sink);
                    if (sink.All > 0) readWithEvents++;
                    else readEmpty++;
                }
                catch (TraceFormatException)
                {
                    refusedInData++;
                }
            }
        }
        // Any other exception fails the test above. Most variants must get past the headers into the event decoder
        // (the damage mostly lands in the CPU pages), and some must be refused there: a fuzz that only ever met the
        // header checks would test nothing of the decoder.
        Assert.Equal(300, refusedAtOpen + refusedInData + readWithEvents + readEmpty);
        Assert.True(readWithEvents + refusedInData >= 150,
            $"{readWithEvents} read with events, {refusedInData} refused in the data, {refusedAtOpen} at open");
        Assert.True(readWithEvents >= 50, $"{readWithEvents} variants delivered events");
        Assert.True(refusedAtOpen >= 10, $"{refusedAtOpen} variants were refused while opening");
    }

    [Fact]
    public void HugeLengthFieldIsRejectedWithoutAllocating()
    {
        var full = File.ReadAllBytes(WriteSample());
        // Offset 22 + 12: the 8-byte header_page length after magic(10) "6\0"(2) endian(1) long(1) page size(4)
        // "header_page\0"(12).
        BitConverter.TryWriteBytes(full.AsSpan(30), long.MaxValue);
        var bad = Path.Combine(_dir, "huge.dat");
        File.WriteAllBytes(bad, full);
        var ex = Assert.Throws<TraceFormatException>(() => TraceDatReader.Open(bad));
        Assert.Equal(30, ex.Offset);
        Assert.Contains("header_page", ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void V7WithAnUnknownCompressionIsRejectedClearly()
    {
        var bytes = new List<byte>(TraceDatWriter.Magic.ToArray());
        bytes.AddRange("7\0"u8.ToArray());
        bytes.AddRange(new byte[] { 0, 8, 0, 16, 0, 0 });
        bytes.AddRange(Encoding.ASCII.GetBytes("lz4\01.9.4\0"));
        bytes.AddRange(new byte[8]);
        var path = Path.Combine(_dir, "v7z.dat");
        File.WriteAllBytes(path, bytes.ToArray());
        var ex = Assert.Throws<TraceFormatException>(() => TraceDatReader.Open(path));
        Assert.Contains("compression 'zlib', 'zstd' or 'none', found 'lz4'", ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void NotATraceFileIsRejected()
    {
        var path = Path.Combine(_dir, "text.dat");
        File.WriteAllText(path, "hello world, this is not a trace");
        var ex = Assert.Throws<TraceFormatException>(() => TraceDatReader.Open(path));
        Assert.Contains("magic", ex.Message, StringComparison.Ordinal);
    }
}
