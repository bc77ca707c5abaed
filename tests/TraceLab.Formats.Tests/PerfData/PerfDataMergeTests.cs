using TraceLab.Core;
using TraceLab.Formats.PerfData;

namespace TraceLab.Formats.Tests.PerfData;

/// <summary>
/// The perf.data reader keeps file ranges, not events, between FINISHED_ROUNDs (<see cref="RoundMerger"/>): it must
/// deliver exactly what holding and sorting every event delivered (checked against that rule, written out below),
/// and what it holds must not grow with the size of perf's rounds.
/// </summary>
public sealed class PerfDataMergeTests : IDisposable
{
    private readonly TestTraceFile _files = new();

    public void Dispose() => _files.Dispose();

    private static readonly byte[] SwitchTemplate = TestTraceFile.Switch(1, 1);
    private static readonly int PrevPidOffset = TestData.Format("sched", "sched_switch").Field("prev_pid")!.Offset;

    /// <summary>A sample whose prev_pid identifies it (so the delivered order can be compared by id).</summary>
    private static PerfDataBuilder Event(PerfDataBuilder b, long time, int cpu, int id, int padding = 0)
    {
        var raw = new byte[SwitchTemplate.Length + padding];
        SwitchTemplate.CopyTo(raw, 0);
        BitConverter.TryWriteBytes(raw.AsSpan(PrevPidOffset), id);
        return b.Sample(time, cpu, raw);
    }

    /// <param name="decodedCapacity">Events the reader decodes as it scans, at most (<see cref="DecodedEvents"/>);
    /// null: the default; 0: none, every run is a file range decoded at delivery.</param>
    private (PerfDataReader Reader, List<KernelEvent> Events) Read(
        PerfDataBuilder b, int? windowBytes = null, int? decodedCapacity = null)
    {
        var path = Path.Combine(_files.Directory, $"{Guid.NewGuid():N}.perf.data");
        File.WriteAllBytes(path, b.Build());
        var reader = PerfDataReader.Open(path);
        if (windowBytes is { } w) reader.WindowBytes = w;
        if (decodedCapacity is { } c) reader.DecodedCapacity = c;
        var sink = new TraceDatRoundTripTests.ListSink();
        reader.Read(sink);
        reader.Dispose();
        return (reader, sink.Events);
    }

    /// <summary>
    /// The rule the reader implemented by holding decoded events (perf's ordered_events): at each FINISHED_ROUND,
    /// sort what is held by (time, file order) and deliver up to the newest time seen before the previous round;
    /// an event older than the last delivered one is delivered on arrival and counted late.
    /// </summary>
    private sealed class HoldAndSort
    {
        private readonly List<(long Time, long Seq, int Id)> _held = new();
        private long _seq, _maxTime = long.MinValue, _previousRoundMax = long.MinValue, _lastFlushed = long.MinValue;
        public List<int> Delivered { get; } = new();
        public long Late { get; private set; }

        public void Sample(long time, int id)
        {
            if (time < _lastFlushed)
            {
                Late++;
                Delivered.Add(id);
                return;
            }

            _held.Add((time, _seq++, id));
            _maxTime = Math.Max(_maxTime, time);
        }

        public void Round()
        {
            if (_held.Count > 0 && _previousRoundMax != long.MinValue) Flush(_previousRoundMax);
            _previousRoundMax = _maxTime;
        }

        public void End()
        {
            if (_held.Count > 0) Flush(long.MaxValue);
        }

        private void Flush(long limit)
        {
            _held.Sort((a, b) => a.Time != b.Time ? a.Time.CompareTo(b.Time) : a.Seq.CompareTo(b.Seq));
            var n = _held.TakeWhile(e => e.Time <= limit).Count();
            Delivered.AddRange(_held.Take(n).Select(e => e.Id));
            if (n > 0) _lastFlushed = _held[n - 1].Time;
            _held.RemoveRange(0, n);
        }
    }

    /// <summary>
    /// Rounds of per-CPU chunks as perf record writes them, plus what real files only sometimes hold: ties, an event
    /// out of order inside a CPU's chunk, events older than what an earlier round delivered (late), missing
    /// FINISHED_ROUNDs, COMM / LOST / unknown records inside the chunks. With a small window the held records
    /// outgrow it (cursors then map the file themselves) — the same order either way. The events decoded at the
    /// scan (<paramref name="decodedCapacity"/>: -1 the default ring, which holds them all here; 0 none; 8 or 16, a
    /// ring that is full most of the time, so that runs begin decoded and go on as file ranges) change nothing either.
    /// </summary>
    [Theory]
    [InlineData(1, 2, false, -1)]
    [InlineData(2, 3, false, -1)]
    [InlineData(3, 4, false, -1)]
    [InlineData(4, 1, false, -1)]
    [InlineData(1, 2, false, 0)]
    [InlineData(3, 4, false, 8)]
    [InlineData(2, 3, false, 16)]
    [InlineData(1, 2, true, 0)]
    [InlineData(3, 4, true, 0)]
    [InlineData(5, 3, true, 8)]
    [InlineData(1, 2, true, 16)]
    public void Delivers_what_holding_and_sorting_every_event_delivers(
        int seed, int cpus, bool smallWindow, int decodedCapacity)
    {
        var random = new Random(seed);
        var b = new PerfDataBuilder { Cpus = cpus };
        var model = new HoldAndSort();
        var id = 1;
        long clock = 1000;
        for (var round = 0; round < 40; round++)
        {
            for (var cpu = 0; cpu < cpus; cpu++)
            {
                var t = clock + random.Next(0, 50);
                var n = random.Next(0, 30);
                for (var i = 0; i < n; i++)
                {
                    t += random.Next(0, 4);
                    var time = t;
                    var dice = random.Next(100);
                    if (dice < 4) time -= random.Next(1, 30);
                    else if (dice < 7) time -= random.Next(100, 400);
                    // With the small window, large records make the held rounds outgrow it (cursors then read the
                    // file).
                    Event(b, time, cpu, id, padding: smallWindow ? random.Next(1_000, 6_000) : random.Next(3) == 0
                        ? random.Next(1, 200) : 0);
                    model.Sample(time, id++);
                    switch (random.Next(40))
                    {
                        case 0: b.Comm(9, 9, "c", t, cpu); break;
                        case 1: b.Other(10, 48); break;
                        case 2: b.Lost(1, t, cpu); break;
                    }
                }
            }

            clock += random.Next(20, 120);
            if (random.Next(5) == 0) continue;
            b.FinishedRound();
            model.Round();
        }

        model.End();
        var (reader, events) = Read(b, smallWindow ? PerfRecordStream.MinWindowBytes : null,
            decodedCapacity < 0 ? null : decodedCapacity);

        Assert.Equal(model.Delivered, events.Select(e => e.PrevTid));
        Assert.Equal(model.Late, reader.LateEvents);
        // Late events are delivered as the scan meets them, never held.
        var held = events.Count - model.Late;
        if (decodedCapacity < 0) Assert.Equal(held, reader.DecodedAtScan);
        else if (decodedCapacity == 0) Assert.Equal(0, reader.DecodedAtScan);
        else Assert.InRange(reader.DecodedAtScan, decodedCapacity, held - 1);
        if (smallWindow) Assert.True(reader.DetachedRuns > 0, "the held rounds should outgrow the window");
        Assert.True(model.Late > 0, "the input should provoke late events");
        Assert.True(reader.PeakHeldRuns < RoundMerger.RunLimit(cpus));
    }

    /// <summary>
    /// Rounds of 1,000 and of 10,000 events per CPU chunk (~0.13 and ~1.3 MB each) read through a 4 MiB window (it
    /// keeps up to 2 MiB behind the scan): the small rounds' records stay in the window until delivered, the large
    /// rounds' do not, and their cursors read them again from the file through small mapped views — so what is held is
    /// the window plus a few cursor
    /// views either way, where holding the events grew with the round. Same events, same order as the model. (Without
    /// events decoded at the scan: that ring is bounded on its own, below.)
    /// </summary>
    [Fact]
    public void Held_memory_does_not_grow_with_round_size()
    {
        const int window = 4 << 20;
        var small = HugeRounds(1_000, window, decodedCapacity: 0);
        var large = HugeRounds(10_000, window, decodedCapacity: 0);

        Assert.Equal(small.Runs, large.Runs);
        // Two CPUs: this round's two chunks and the previous round's two, plus one being scanned.
        Assert.InRange(large.Runs, 2, 5);
        Assert.Equal(0, small.Detached);
        Assert.Equal(0, small.Bytes);
        Assert.True(large.Detached > 0, "rounds larger than the window must be read again from the file");
        Assert.InRange(large.Bytes, 1, 4 * RoundMerger.RunViewBytes);
    }

    /// <summary>
    /// With the default window the large rounds' records stay in it: nothing is read twice from the file.
    /// </summary>
    [Fact]
    public void Rounds_that_fit_the_window_are_read_from_the_file_once()
    {
        var large = HugeRounds(10_000, null, decodedCapacity: 0);
        Assert.Equal(0, large.Detached);
        Assert.Equal(0, large.Bytes);
    }

    /// <summary>
    /// The scan decodes the events it holds into a ring of <see cref="PerfDataReader.DecodedCapacity"/> events, which
    /// does not grow: rounds of 2,000 events (two held at once) fit the default ring and are all decoded at the scan;
    /// rounds of 20,000 in a ring of 4,096 fill it, and the events it has no room for are decoded at delivery from
    /// their records, as without the ring — the same events in the same order either way (checked in
    /// <see cref="HugeRounds"/> against the model).
    /// </summary>
    [Fact]
    public void The_ring_of_decoded_events_is_bounded_and_what_it_cannot_hold_is_read_again()
    {
        var fits = HugeRounds(1_000, null, decodedCapacity: null);
        Assert.Equal(8 * 1_000, fits.Decoded);

        var outgrows = HugeRounds(10_000, null, decodedCapacity: 4_096);
        Assert.InRange(outgrows.Decoded, 4_096, 8 * 10_000 - 1);
        Assert.Equal(0, outgrows.Detached);
    }

    private (int Runs, long Bytes, long Detached, long Decoded) HugeRounds(
        int perChunk, int? windowBytes, int? decodedCapacity)
    {
        var b = new PerfDataBuilder { Cpus = 2 };
        var model = new HoldAndSort();
        var id = 1;
        for (var round = 0; round < 4; round++)
        {
            for (var cpu = 0; cpu < 2; cpu++)
            {
                for (var i = 0; i < perChunk; i++)
                {
                    // Both CPUs cover the same time span of the round, interleaved.
                    var time = 1_000_000L * round + 2L * i + cpu;
                    Event(b, time, cpu, id);
                    model.Sample(time, id++);
                }
            }

            b.FinishedRound();
            model.Round();
        }

        model.End();
        var (reader, events) = Read(b, windowBytes, decodedCapacity);
        Assert.Equal(model.Delivered, events.Select(e => e.PrevTid));
        Assert.Equal(0, reader.LateEvents);
        return (reader.PeakHeldRuns, reader.PeakHeldBufferBytes, reader.DetachedRuns, reader.DecodedAtScan);
    }

    /// <summary>
    /// Safety net: a file without rounds whose events all go back in time is cut into one run per event; at
    /// <see cref="RoundMerger.RunLimit"/> runs the older half is delivered (as at <see cref="RoundMerger.MaxQueued"/>
    /// events), so buffers stay bounded and later events come late — each event still delivered exactly once.
    /// Records of 20 KB are larger than a cursor buffer shared among that many runs.
    /// </summary>
    [Fact]
    public void Too_many_runs_flush_the_older_half_and_every_event_comes_once()
    {
        var limit = RoundMerger.RunLimit(1);
        var n = limit + 100;
        var b = new PerfDataBuilder { Cpus = 1 };
        for (var i = 0; i < n; i++) Event(b, 10L * (n - i), 0, i + 1, padding: 20_000);
        var (reader, events) = Read(b);

        Assert.Equal(Enumerable.Range(1, n), events.Select(e => e.PrevTid).Order());
        Assert.Equal(n - limit, reader.LateEvents);
        Assert.Equal(limit, reader.PeakHeldRuns);
        // The forced flush delivers the older half of what is held, in time order.
        var merged = events.Take(limit / 2).Select(e => e.Timestamp).ToList();
        Assert.Equal(merged.Order(), merged);
    }

    /// <summary>
    /// A busy system's perf.data is cut into a run every few events (perf drains each CPU's buffer often, each drain a
    /// stretch of its own): the reader reuses delivered runs, so what it allocates does not grow with the runs. Here
    /// 300 and 3,000 small rounds on two CPUs (two runs each); a new object per run allocated ~250 bytes each.
    /// </summary>
    [Fact]
    public void Reading_allocates_nothing_per_run()
    {
        var few = AllocatedReading(rounds: 300);
        var many = AllocatedReading(rounds: 3_000);
        Assert.True(many.Runs > 5_900, $"{many.Runs} runs");
        Assert.True(many.Bytes - few.Bytes < 64 * 1024,
            $"{few.Bytes:N0} bytes for {few.Runs:N0} runs, {many.Bytes:N0} for {many.Runs:N0}");
    }

    private (long Runs, long Bytes) AllocatedReading(int rounds)
    {
        var b = new PerfDataBuilder { Cpus = 2 };
        for (var round = 0; round < rounds; round++)
        {
            // Each CPU's three events cover the same span: the second CPU's go back in time, a run of their own.
            for (var cpu = 0; cpu < 2; cpu++)
                for (var i = 0; i < 3; i++) Event(b, 1_000L * round + 2L * i + cpu, cpu, 1 + cpu);
            b.FinishedRound();
        }

        var path = Path.Combine(_files.Directory, $"{Guid.NewGuid():N}.perf.data");
        File.WriteAllBytes(path, b.Build());
        using var reader = PerfDataReader.Open(path);
        var sink = new CountOnly();
        var before = GC.GetAllocatedBytesForCurrentThread();
        reader.Read(sink);
        var bytes = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.Equal(6L * rounds, sink.Count);
        return (reader.TotalRuns, bytes);
    }

    private sealed class CountOnly : IKernelEventSink
    {
        public long Count;
        public void OnEvent(in KernelEvent e) => Count++;
    }

    /// <summary>
    /// What keeps memory small holds on a real perf record -a file: each CPU's stretch of samples within a round is in
    /// time order, so runs start only where the CPU changes or a round is flushed, and at most this round's and the
    /// previous round's stretches (two per CPU) plus the one being scanned are held.
    /// </summary>
    [Fact]
    public void A_real_perf_record_file_is_cut_only_per_cpu_and_round()
    {
        using var reader =
            PerfDataReader.Open(Path.Combine(RepoPaths.SampleTraces, "perf-timemutex-mutex", "capture.perf.data"));
        var sink = new TraceDatRoundTripTests.ListSink();
        reader.Read(sink);

        var cpus = reader.Info.CpuCount;
        var cpuChanges = 1 + sink.Events.Zip(sink.Events.Skip(1)).Count(p => p.First.Cpu != p.Second.Cpu);
        Assert.True(reader.Rounds > 0);
        Assert.InRange(reader.TotalRuns, 1, (reader.Rounds + 1) * cpus);
        Assert.InRange(reader.PeakHeldRuns, 1, 2 * cpus + 1);
        Assert.True(
            sink.Events.Count > 10_000 && cpuChanges > reader.TotalRuns, "the merge must have interleaved the CPUs");
        Assert.Equal(0, reader.LateEvents);
        // No stacks: events are decoded as the scan reads them, at least a ring's worth (rounds larger than the ring
        // go on as file ranges).
        Assert.InRange(reader.DecodedAtScan, Math.Min(sink.Events.Count, DecodedEvents.DefaultCapacity),
            sink.Events.Count);
    }

    /// <summary>
    /// Events are decoded when delivered, but thread names must change in file order as before: here the COMM record
    /// that follows the switch in the file has the last word, although the switch is delivered after it is read.
    /// </summary>
    [Fact]
    public void Thread_names_follow_file_order_not_delivery_order()
    {
        var b = new PerfDataBuilder();
        b.Sample(30, 0, TestTraceFile.Switch(4, 5)).Comm(5, 5, "renamed", 31, 0)
            .Sample(10, 1, TestTraceFile.Switch(6, 7)).FinishedRound();
        var (reader, events) = Read(b);

        Assert.Equal([10L, 30], events.Select(e => e.Timestamp));
        Assert.Equal("renamed", reader.Threads.NameOf(5));
        Assert.Equal("t7", reader.Threads.NameOf(7));
    }
}
