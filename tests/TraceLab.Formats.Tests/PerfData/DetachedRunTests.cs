using TraceLab.Core;
using TraceLab.Formats.PerfData;

namespace TraceLab.Formats.Tests.PerfData;

/// <summary>
/// Runs the window cannot keep are read again through views of the file moved along the run (<see cref="SampleRun"/>):
/// records lying across a view's end, and damaged records, must give the events or one
/// <see cref="TraceFormatException"/>, never a read outside a mapped view (an access violation kills the process).
/// </summary>
public sealed class DetachedRunTests : IDisposable
{
    private readonly TestTraceFile _files = new();

    public void Dispose() => _files.Dispose();

    private static readonly byte[] SwitchTemplate = TestTraceFile.Switch(1, 1);
    private static readonly int PrevPidOffset = TestData.Format("sched", "sched_switch").Field("prev_pid")!.Offset;

    private string Write(PerfDataBuilder b)
    {
        var path = Path.Combine(_files.Directory, $"{Guid.NewGuid():N}.perf.data");
        File.WriteAllBytes(path, b.Build());
        return path;
    }

    /// <summary>
    /// The shape of a perf record -a of sched:* during a parallel build (rounds of tens of MB, MMAP/COMM records of
    /// new processes between the samples of each CPU's buffer), scaled down: rounds of ~6 MB per CPU through the
    /// smallest window, so every run is detached and its cursor moves its view (~4 MiB) along the run, where the
    /// records crossing the view's end are as often MMAP-like records (type 10) as samples. The cursor read such a
    /// record's header from the view it had just unmapped: an access violation. Each sample carries its number, so
    /// the events must come out all, in time order.
    /// </summary>
    [Fact]
    public void Records_across_a_detached_view_end_are_read_from_the_new_view()
    {
        const int cpus = 2, rounds = 3, perChunk = 2_000;
        var b = new PerfDataBuilder { Cpus = cpus };
        var expected = new List<(long Time, int Id)>();
        var id = 1;
        for (var round = 0; round < rounds; round++)
        {
            for (var cpu = 0; cpu < cpus; cpu++)
            {
                for (var i = 0; i < perChunk; i++)
                {
                    // Both CPUs cover the same span of the round, interleaved; record sizes vary so view ends fall
                    // at every place inside both kinds of record.
                    var time = 10_000_000L * round + 2L * i + cpu;
                    var raw = new byte[SwitchTemplate.Length + 900 + (i * 37) % 400];
                    SwitchTemplate.CopyTo(raw, 0);
                    BitConverter.TryWriteBytes(raw.AsSpan(PrevPidOffset), id);
                    b.Sample(time, cpu, raw);
                    expected.Add((time, id++));
                    b.Other(10, 1_600 + 8 * ((i * 13) % 100));
                }
            }

            b.FinishedRound();
        }

        using var reader = PerfDataReader.Open(Write(b));
        reader.WindowBytes = PerfRecordStream.MinWindowBytes;
        // Runs as file ranges, decoded at delivery (the path detached cursors serve).
        reader.DecodedCapacity = 0;
        var sink = new TraceDatRoundTripTests.ListSink();
        reader.Read(sink);

        Assert.Equal(expected.OrderBy(e => e.Time).Select(e => e.Id), sink.Events.Select(e => e.PrevTid));
        Assert.True(reader.DetachedRuns >= cpus * (rounds - 1), $"runs read from the file: {reader.DetachedRuns}");
        // Each chunk (~6 MB) is larger than a cursor's view: the cursors moved their views along the runs.
        Assert.InRange(reader.PeakHeldBufferBytes, 1, 5 * RoundMerger.RunViewBytes);
    }

    /// <summary>
    /// An AUXTRACE record whose AUX length is 2^64 - 48 (negative as a signed 64-bit number, so that the record
    /// plus its data came to 0 bytes: the scan stood still, or with another value moved backwards) is one damage
    /// report naming the record.
    /// </summary>
    [Theory]
    [InlineData(ulong.MaxValue - 47)]
    [InlineData(ulong.MaxValue - 63)]
    [InlineData(1UL << 40)]
    public void An_impossible_aux_length_is_one_format_error(ulong auxBytes)
    {
        var b = new PerfDataBuilder();
        b.Sample(1_000, 0, SwitchTemplate);
        b.Auxtrace(auxBytes);
        b.Sample(2_000, 0, SwitchTemplate);
        using var reader = PerfDataReader.Open(Write(b));

        var error = Assert.Throws<TraceFormatException>(() => reader.Read(new TraceDatRoundTripTests.ListSink()));
        Assert.Contains("inside the data section", error.Message, StringComparison.Ordinal);
        Assert.DoesNotContain('\n', error.Message);
    }
}
