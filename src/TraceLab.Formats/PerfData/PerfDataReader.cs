using System.Buffers.Binary;
using System.Globalization;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
using TraceLab.Core;
using TraceLab.Formats.Ftrace;
using TraceLab.Formats.Registry;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Formats.PerfData;

/// <summary>
/// Reads perf.data files recorded from tracepoints (perf record -e 'sched:*' [-e raw_syscalls:*] -a): the raw
/// tracepoint payload of every sample is the same bytes ftrace writes, so <see cref="KernelEventDecoder"/> decodes it
/// with the formats perf stored in HEADER_TRACING_DATA. Samples are put in time order per perf's FINISHED_ROUND
/// rule (<see cref="RoundMerger"/>: the file is scanned once in file order — thread names, lost counts, late events,
/// checks — and read again in time order at delivery, so memory does not grow with perf's rounds); COMM records
/// name threads; the pid of samples, COMM and FORK records gives each thread its process
/// (<see cref="ThreadTable.Processes"/>); LOST / LOST_SAMPLES records count lost events. Samples recorded with
/// callchains (perf record -g) carry their stack (<see cref="KernelEvent.StackId"/>), named through the module maps
/// of the MMAP / MMAP2 records (<see cref="PerfStacks"/>).
/// </summary>
public sealed class PerfDataReader : IStackTraceReader
{
    private readonly SafeFileHandle _handle;
    private readonly string _path;
    private readonly bool _salvage;
    private readonly PerfDataMetadata _meta;
    private readonly KernelEventDecoder _decoder;
    private readonly SampleFormat _samples;
    /// <summary><see cref="SampleFormat.UniformTidOffset"/>, read per sample.</summary>
    private readonly int _uniformTidOffset;
    private readonly SampleIdTrailer _trailer;
    private readonly TaskRecords _tasks;
    private readonly long[] _recordCounts = new long[PerfRecordType.Counted];
    private PerfRecordStream? _stream;
    private readonly long[] _lost;
    private readonly int _cpuLimit;
    private readonly long[] _lostRecords;
    private readonly long[] _lostSamples;
    private bool _read;

    private PerfDataReader(SafeFileHandle handle, string path, PerfDataMetadata meta, bool salvage)
    {
        _handle = handle;
        _path = path;
        _meta = meta;
        _salvage = salvage;
        Threads = new ThreadTable();
        SavedCmdlines.LoadInto(meta.Cmdlines, Threads);
        _decoder = new KernelEventDecoder(meta.Formats, Threads);

        var tracepoints = meta.Attrs.Where(a => a.IsTracepoint).ToList();
        if (tracepoints.Count == 0 && !meta.Attrs.Any(a => a.ContextSwitch))
            throw new TraceFormatException($"{path}: expected tracepoint events " +
                "(perf record -e 'sched:sched_switch,...') or context switch records (perf record --switch-events), "
                    + "found neither");
        var lead = tracepoints.Count > 0 ? tracepoints[0] : meta.Attrs[0];
        _samples = tracepoints.Count > 0 ? new SampleFormat(meta.Attrs, lead, path) : SampleFormat.WithoutTracepoints();
        _uniformTidOffset = _samples.UniformTidOffset;
        _trailer = new SampleIdTrailer(lead.SampleType, meta.Attrs.All(a => a.SampleIdAll));
        _tasks = new TaskRecords(meta.Attrs, meta.Formats, _trailer);
        if (_samples.HasCallchains) _stacks = new PerfStacks(_trailer, RecordedBuildIds);
        var cpus = Math.Max(1, meta.CpuCount);
        // HEADER_NRCPUS gives the CPUs the machine had; without it the kernel's own limit bounds a CPU number.
        _cpuLimit = meta.CpuCount > 0 ? meta.CpuCount : 4096;
        _lost = new long[cpus];
        _lostRecords = new long[cpus];
        _lostSamples = new long[cpus];
        Info = new TraceInfo
        {
            Backend = "perf",
            TraceFile = path,
            CpuCount = cpus,
            TraceClock = "perf",
            KernelRelease = meta.OsRelease,
            // Known once the records are read: the complete TraceInfo after Read holds the counts.
            LostEventsPerCpu = new long[cpus],
            SkippedFormats = meta.SkippedFormats,
            // Markers come from ftrace's print event; only one recorded (an attr of its id) can be in the samples.
            MayHaveMarkers = tracepoints.Exists(a => _decoder.IsMarkerFormat((long)Math.Min(a.Config, long.MaxValue))),
        };
        if (!Info.MayHaveMarkers) _decoder.DecodeMarkersAsOther();
    }

    public TraceInfo Info { get; private set; }
    public ThreadTable Threads { get; }

    private readonly PerfStacks? _stacks;
    private readonly PerfStacks _noStacks = new(default);

    /// <inheritdoc/>
    public bool HasStacks => _stacks is not null;

    /// <inheritdoc/>
    public StackTable Stacks => (_stacks ?? _noStacks).Table;

    /// <inheritdoc/>
    public ProcessMaps Maps => (_stacks ?? _noStacks).Maps;

    /// <summary>
    /// HEADER_BUILD_ID: the build-id perf saw for each file it found samples in, by path (the kernel's as
    /// "[kernel.kallsyms]"): tells a binary that changed since the recording.
    /// </summary>
    public IReadOnlyDictionary<string, byte[]> RecordedBuildIds =>
        _buildIds ??= _meta.BuildIds.GroupBy(b => b.Path, StringComparer.Ordinal)
            .ToDictionary(g => g.Key, g => g.First().BuildId, StringComparer.Ordinal);

    private Dictionary<string, byte[]>? _buildIds;

    /// <summary>Frames in guest or hypervisor context left out of the stacks.</summary>
    public long OtherContextFrames => _stacks?.OtherContextFrames ?? 0;

    /// <summary>MMAP / MMAP2 records that could not be read.</summary>
    public long BadMappings => _stacks?.BadMappings ?? 0;

    /// <summary>Tracepoint formats stored in the file.</summary>
    public IReadOnlyList<FtraceEventFormat> Formats => _meta.Formats;

    /// <summary>Samples that arrived older than events already delivered (perf warns about the same).</summary>
    public long LateEvents { get; private set; }

    /// <summary>
    /// Runs (time-ordered stretches of the file) held at once at most while reading; see <see cref="RoundMerger"/>.
    /// </summary>
    internal int PeakHeldRuns { get; private set; }

    /// <summary>Runs the file was cut into (a new one wherever time goes back in file order).</summary>
    internal long TotalRuns { get; private set; }

    /// <summary>Runs whose records the window could not keep until delivery (read again from the file).</summary>
    internal long DetachedRuns { get; private set; }

    /// <summary>
    /// Size of the scan's window, which also keeps the records awaiting delivery (tests make it small).
    /// </summary>
    internal int WindowBytes { get; set; } = PerfRecordStream.DefaultWindowBytes;

    /// <summary>Bytes read into the window at a time (tests make it small).</summary>
    internal int FillStepBytes { get; set; } = PerfRecordStream.DefaultFillStepBytes;

    /// <summary>Bytes of the file read into the scan's window so far (while and after reading).</summary>
    internal long WindowBytesRead => _stream?.BytesRead ?? 0;

    /// <summary>
    /// Records read per perf_event_header type (index: the type; decompressed records by their own type).
    /// </summary>
    internal long RecordCount(uint type) => type < (uint)_recordCounts.Length ? _recordCounts[type] : 0;

    /// <summary>
    /// The data section was compressed (perf record -z): bytes decompressed, and the buffer's largest size.
    /// </summary>
    internal long InflatedBytes { get; private set; }
    internal int PeakInflateBuffer { get; private set; }

    /// <summary>
    /// Switch events came from SWITCH / SWITCH_CPU_WIDE records (no sched_switch tracepoint recorded).
    /// </summary>
    internal bool SwitchesFromRecords => _tasks.SwitchesFromRecords;

    /// <summary>
    /// Events held at most decoded (<see cref="DecodedEvents"/>; 0: none, every event is decoded at delivery); tests
    /// make it small to exercise runs that go on as file ranges.
    /// </summary>
    internal int DecodedCapacity { get; set; } = DecodedEvents.DefaultCapacity;

    /// <summary>Events decoded as the scan read them (the rest were decoded at delivery).</summary>
    internal long DecodedAtScan { get; private set; }

    /// <summary>FINISHED_ROUND records read.</summary>
    internal long Rounds { get; private set; }

    /// <summary>
    /// Bytes of the file mapped by the run cursors at once at most for events awaiting delivery (besides the window).
    /// </summary>
    internal long PeakHeldBufferBytes { get; private set; }

    /// <exception cref="TraceFormatException">The file is not a readable perf.data with tracepoint samples.</exception>
    public static PerfDataReader Open(string path, TraceReadOptions? options = null)
    {
        var salvage = (options ?? TraceReadOptions.Default).Salvage;
        var handle = File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.Read, FileOptions.SequentialScan);
        try
        {
            var meta = PerfDataMetadataParser.Parse(new BoundedFileReader(handle, path));
            return new PerfDataReader(handle, path, meta, salvage);
        }
        catch
        {
            handle.Dispose();
            throw;
        }
    }

    public void Read(IKernelEventSink sink, CancellationToken cancellationToken = default)
    {
        if (_read)
            throw new InvalidOperationException("PerfDataReader.Read streams the file once; open it again to re-read.");
        _read = true;
        var counter = new CountingSink(sink);
        var stream = _meta.Compression is { } compression
            ? new PerfRecordStream(
                _handle, _path, _meta.DataOffset, _meta.DataSize, compression, WindowBytes, FillStepBytes)
            : new PerfRecordStream(_handle, _path, _meta.DataOffset, _meta.DataSize, WindowBytes, FillStepBytes);
        _stream = stream;
        // Samples with a stack are decoded at delivery (their stack is interned then, in time order): no ring.
        var queue = new RoundMerger(_path, _samples, _decoder, _cpuLimit, stream, _tasks, _stacks,
            _stacks is null ? DecodedCapacity : 0);
        try
        {
            Scan(stream, queue, counter, cancellationToken);
            queue.FlushAll(counter);
        }
        finally
        {
            if (stream.Inflated is { } inflated)
            {
                _recordCounts[PerfRecordType.Compressed] = inflated.CompressedRecords;
                InflatedBytes = inflated.InflatedBytes;
                PeakInflateBuffer = inflated.PeakCapacity;
            }

            // The window is a mapping of the file (or the decompression buffer): released whether the read ends or
            // fails.
            queue.Release();
            stream.Release();
        }

        // The kernel's LOST records and the LOST_SAMPLES records perf record writes at the end (from each event's
        // lost counter) count the same dropped samples: every drop adds one to the CPU's buffer's lost count, which
        // LOST records report as the buffer frees up (the last stretch may never be reported), and to the event's
        // own counter, which LOST_SAMPLES reports whole. Per CPU the larger of the two is the loss.
        for (var cpu = 0; cpu < _lost.Length; cpu++) _lost[cpu] = Math.Max(_lostRecords[cpu], _lostSamples[cpu]);
        if (stream.IncompleteTailBytes > 0 && _damage is null)
        {
            var tail = stream.IncompleteTailBytes;
            _damage = string.Create(CultureInfo.InvariantCulture,
                $"the compressed data ends inside a record ({tail} bytes of it, left unread as perf does)");
        }
        LateEvents = queue.LateEvents;
        DecodedAtScan = queue.Decoded.Added;
        PeakHeldRuns = queue.PeakRuns;
        TotalRuns = queue.TotalRuns;
        PeakHeldBufferBytes = queue.PeakBufferBytes;
        DetachedRuns = queue.DetachedRuns;
        // A new, complete TraceInfo: the one handed out before the read is never written to.
        Info = Info with
        {
            CpuCount = Math.Max(Info.CpuCount, _cpusSeen),
            LostEventsPerCpu = _lost,
            EventCount = counter.Count,
            FirstTimestamp = counter.First,
            LastTimestamp = counter.Last,
            UnknownEvents = _decoder.UnknownEventCount,
            SkippedBytesPerCpu = _skippedBytes ?? Info.SkippedBytesPerCpu,
            Damage = _damage ?? Info.Damage,
        };
    }

    /// <summary>What a salvaging read skipped, or the compressed data's cut tail: the complete info's.</summary>
    private string? _damage;
    private long[]? _skippedBytes;

    /// <summary>
    /// Reads the records in file order; events are held for the merge (or delivered late), the rest applied.
    /// </summary>
    private void Scan(
        PerfRecordStream stream, RoundMerger queue, CountingSink counter, CancellationToken cancellationToken)
    {
        long records = 0, check = 0x10000;
        try
        {
            while (true)
            {
                records += Samples(stream, queue, counter);
                if (!stream.MoveNext()) break;
                if (++records >= check)
                {
                    cancellationToken.ThrowIfCancellationRequested();
                    check = records + 0x10000;
                }

                var type = stream.Type;
                if (type < (uint)_recordCounts.Length) _recordCounts[type]++;
                switch (type)
                {
                    case PerfRecordType.Sample: Sample(stream.Body, stream.RecordOffset, queue, counter); break;
                    case PerfRecordType.Switch:
                    case PerfRecordType.SwitchCpuWide:
                    case PerfRecordType.Fork:
                    case PerfRecordType.Exit:
                        Task(stream, queue, counter);
                        break;
                    case PerfRecordType.FinishedRound: Rounds++; queue.FinishRound(counter); break;
                    case PerfRecordType.Comm:
                        Comm(stream.Body);
                        _stacks?.Comm(stream.Misc, stream.Body);
                        break;
                    case PerfRecordType.Mmap:
                    case PerfRecordType.Mmap2:
                        _stacks?.Mapping(type, stream.Misc, stream.Body);
                        break;
                    case PerfRecordType.Lost: Lost(stream.Body, 8, _trailer.Cpu(stream.Body), _lostRecords); break;
                    case PerfRecordType.LostSamples: LostSamples(stream.Body, stream.Misc); break;
                    case PerfRecordType.Compressed:
                    case PerfRecordType.Compressed2:
                        // perf itself cannot read these without HEADER_COMPRESSED (its buffer size is there).
                        throw new TraceFormatException(_path, stream.RecordOffset,
                            "no COMPRESSED record in a perf.data without the HEADER_COMPRESSED feature " +
                            "(perf cannot read it either)");
                }
            }
        }
        catch (TraceFormatException error) when (_salvage)
        {
            var skipped = stream.End - error.Offset;
            _skippedBytes = [skipped];
            _damage = string.Create(CultureInfo.InvariantCulture,
                $"salvaged a damaged perf.data: {skipped:N0} bytes of events skipped from offset {error.Offset} ")
                + string.Create(CultureInfo.InvariantCulture, $"({Expected(error)}); ")
                + "the events after the damage are missing";
        }
    }

    /// <summary>
    /// The scan's hot loop: the sample records lying whole in the window, one after the other, without going through
    /// the stream record by record; stops at anything else (other records, the window's end, a header to check),
    /// which <see cref="PerfRecordStream.MoveNext"/> then handles. Returns the records walked (at most 64 Ki, so the
    /// caller checks for cancellation as often as before).
    /// </summary>
    private int Samples(PerfRecordStream stream, RoundMerger queue, CountingSink sink)
    {
        var ahead = stream.Ahead;
        var origin = stream.AheadOffset;
        var at = 0;
        var n = 0;
        while (ahead.Length - at >= 8 && n < 0x10000)
        {
            var head = ahead.Slice(at, 8);
            int size = BinaryPrimitives.ReadUInt16LittleEndian(head[6..]);
            if (BinaryPrimitives.ReadUInt32LittleEndian(head) != PerfRecordType.Sample || size < 8
                || size > ahead.Length - at) break;
            Sample(ahead.Slice(at + 8, size - 8), origin + at, queue, sink);
            at += size;
            n++;
        }

        stream.Skip(at);
        _recordCounts[PerfRecordType.Sample] += n;
        return n;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Sample(ReadOnlySpan<byte> body, long recordOffset, RoundMerger queue, CountingSink sink)
    {
        switch (_samples.Parse(body, out var time, out var cpu, out var raw))
        {
            case SampleParse.NoPayload: return;
            case SampleParse.UnknownId:
                throw Fail(recordOffset, "a sample whose id belongs to one of the file's events");
            case SampleParse.TooShort:
                throw Fail(recordOffset,
                    $"a sample record long enough for its sample type ({body.Length + 8} bytes is too short)");
        }

        // The CPU indexes per-CPU state in every analyzer: a corrupt one must not pass as a huge CPU number.
        if ((uint)cpu >= (uint)_cpuLimit)
            throw Fail(recordOffset, $"a sample CPU below {_cpuLimit}, found {cpu}");
        if (cpu >= _cpusSeen) SeeCpu(cpu);
        NoteThread(body, cpu);
        if (queue.IsLate(time))
        {
            Late(recordOffset, queue, sink, time, cpu, raw, _stacks?.Intern(_samples, body, time) ?? 0);
            return;
        }

        // Checked and named now, in file order; decoded now too while the ring of decoded events has room (samples
        // without a stack: a stack is interned at delivery, in time order), else when the merge delivers it.
        if (!_decoder.Check(raw, time)) throw TooShort(recordOffset, raw);
        var number = queue.Add(time, recordOffset, recordOffset + 8 + body.Length, decodable: true);
        if (number >= 0 && !_decoder.Decode(raw, time, cpu, ref queue.Decoded[number], updateNames: false))
            throw TooShort(recordOffset, raw);
        if (queue.Full) queue.FlushHalf(sink);
    }

    /// <summary>Per CPU, the thread of its last sample (0: none yet): its process was noted then.</summary>
    private int[] _threadOnCpu = new int[8];

    /// <summary>
    /// Passes the sample's pid on as its thread's process (<see cref="ThreadTable.Processes"/>): how threads of
    /// processes that predate the recording are grouped (no FORK record says whose they are). Only when the CPU's
    /// thread changed since its last sample: most samples cost one read and one compare, in place.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void NoteThread(ReadOnlySpan<byte> body, int cpu)
    {
        var at = _uniformTidOffset;
        var threads = _threadOnCpu;
        if (at >= 0 && body.Length >= at + 8 && (uint)cpu < (uint)threads.Length
            && Unsafe.ReadUnaligned<int>(ref Unsafe.Add(ref MemoryMarshal.GetReference(body), at + 4)) == threads[cpu])
            return;
        NoteThreadChange(body, cpu);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private void NoteThreadChange(ReadOnlySpan<byte> body, int cpu)
    {
        // Where every layout has the thread at one place it is read there, as NoteThread read the tid: the sample's
        // id is a known one (Parse said so), so TryThread would find that place too, through its layout.
        int pid, tid;
        var at = _uniformTidOffset;
        if (at >= 0 && body.Length >= at + 8)
        {
            ref var thread = ref Unsafe.Add(ref MemoryMarshal.GetReference(body), at);
            pid = Unsafe.ReadUnaligned<int>(ref thread);
            tid = Unsafe.ReadUnaligned<int>(ref Unsafe.Add(ref thread, 4));
        }
        else if (!_samples.TryThread(body, out pid, out tid)) return;
        if ((uint)cpu >= (uint)_threadOnCpu.Length) Array.Resize(ref _threadOnCpu, Math.Max(cpu + 1, 8));
        ref var last = ref _threadOnCpu[cpu];
        if (last == tid) return;
        // Idle (tid 0) states no process but counts as a change: a tid reused after it is looked at again.
        last = tid;
        if (tid <= 0) return;
        ref var stated = ref _statedPids.At(tid);
        if (stated == pid) return;
        stated = pid;
        Threads.SetProcess(tid, pid);
    }

    /// <summary>The pid last stated per tid, so that a thread switching back in costs no hash lookup.</summary>
    private TidPages _statedPids;

    /// <summary>
    /// Highest CPU seen so far + 1, as <see cref="TraceInfo.CpuCount"/> grows (kept here: read per sample).
    /// </summary>
    private int _cpusSeen;

    private void SeeCpu(int cpu)
    {
        _cpusSeen = cpu + 1;
    }

    /// <summary>Older than what was delivered already: delivered now (perf does the same and warns).</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void Late(long recordOffset, RoundMerger queue, CountingSink sink, long time, int cpu,
        ReadOnlySpan<byte> raw, int stack)
    {
        queue.CountLate();
        var late = new KernelEvent();
        if (!_decoder.Decode(raw, time, cpu, ref late)) throw TooShort(recordOffset, raw);
        late.Stack = stack;
        sink.OnEvent(in late);
    }

    private TraceFormatException TooShort(long recordOffset, ReadOnlySpan<byte> raw) =>
        Fail(recordOffset, $"a tracepoint payload long enough for its event type ({raw.Length} bytes is too short)");

    /// <summary>
    /// Damage at a record: its file offset (when decompressing, of the COMPRESSED record it came from).
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private TraceFormatException Fail(long recordOffset, string expected) =>
        _stream?.Fail(recordOffset, expected) ?? new TraceFormatException(_path, recordOffset, expected);

    /// <summary>
    /// SWITCH, SWITCH_CPU_WIDE, FORK, EXIT: noted in file order, and queued for the merge when <see
    /// cref="TaskRecords"/>
    /// makes them events (built at delivery, like samples decoded then).
    /// </summary>
    private void Task(PerfRecordStream stream, RoundMerger queue, CountingSink sink)
    {
        var body = stream.Body;
        var type = stream.Type;
        _tasks.Scan(type, body);
        if (type == PerfRecordType.Fork) _stacks?.Fork(body);
        // FORK: u32 pid, ppid, tid, ptid — the new task's process, whether or not the record is an event.
        if (type == PerfRecordType.Fork && body.Length >= 16)
            Threads.SetProcess((int)BinaryPrimitives.ReadUInt32LittleEndian(body[8..]),
                (int)BinaryPrimitives.ReadUInt32LittleEndian(body));
        if (!_tasks.IsEvent(type, stream.Misc) || !_tasks.Place(type, body, out var time, out var cpu)) return;
        if ((uint)cpu >= (uint)_cpuLimit)
            throw Fail(stream.RecordOffset, $"a record CPU below {_cpuLimit}, found {cpu}");
        if (cpu >= _cpusSeen) SeeCpu(cpu);
        if (queue.IsLate(time))
        {
            queue.CountLate();
            var late = new KernelEvent();
            _tasks.Build(type, stream.Misc, body, time, cpu, ref late);
            sink.OnEvent(in late);
            return;
        }

        queue.Add(time, stream.RecordOffset, stream.RecordOffset + 8 + body.Length);
        if (queue.Full) queue.FlushHalf(sink);
    }

    /// <summary>PERF_RECORD_COMM: u32 pid, u32 tid, NUL-padded comm, then the sample id trailer.</summary>
    private void Comm(ReadOnlySpan<byte> body)
    {
        if (body.Length < 9) return;
        var tid = (int)BinaryPrimitives.ReadUInt32LittleEndian(body[4..]);
        var comm = body[8..^Math.Min(_trailer.Size, body.Length - 8)];
        // When the name took effect, for the name at an event's time (ThreadTable.TryGetNameAt): sample_id_all's time;
        // perf's records of the threads there before it started have time 0 and open the file: named from the start.
        var time = _trailer.Time(body);
        if (tid > 0 && !comm.IsEmpty) _decoder.SetThreadName(tid, comm, time > 0 ? time : long.MinValue);
        Threads.SetProcess(tid, (int)BinaryPrimitives.ReadUInt32LittleEndian(body));
    }

    /// <summary>PERF_RECORD_LOST (u64 id, u64 lost) or PERF_RECORD_LOST_SAMPLES (u64 lost), counted on a CPU.</summary>
    private static void Lost(ReadOnlySpan<byte> body, int countOffset, int cpu, long[] into)
    {
        if (body.Length < countOffset + 8) return;
        var lost = (long)BinaryPrimitives.ReadUInt64LittleEndian(body[countOffset..]);
        into[cpu >= 0 && cpu < into.Length ? cpu : 0] += lost;
    }

    /// <summary>PERF_RECORD_MISC_LOST_SAMPLES_BPF: samples a BPF filter dropped on purpose, not lost ones.</summary>
    private const ushort LostSamplesBpf = 1 << 15;

    /// <summary>
    /// PERF_RECORD_LOST_SAMPLES. perf record writes one per event and CPU at its end, from that event's lost counter,
    /// with only the sample id set in its trailer (CPU and time are 0): the CPU is the id's place in its attribute's
    /// id list (docs/formats.md#perfdata). Counts a BPF filter dropped are not losses; perf leaves them out too.
    /// </summary>
    private void LostSamples(ReadOnlySpan<byte> body, ushort misc)
    {
        if ((misc & LostSamplesBpf) != 0) return;
        var cpu = _trailer.Id(body) is { } id && CpuOfId(id) is var placed and >= 0 ? placed : _trailer.Cpu(body);
        Lost(body, 0, cpu, _lostSamples);
    }

    /// <summary>Sample id → CPU, for attributes opened once per CPU; built at the first LOST_SAMPLES.</summary>
    private Dictionary<ulong, int>? _cpuOfId;

    /// <summary>
    /// The CPU an event id was opened on, or -1. perf record -a opens each event once per CPU of its CPU map, in map
    /// order, and writes the ids in that order; with every CPU online (nr_cpus_online = nr_cpus_available) the map
    /// is CPUs 0 … n−1, so the id's index is its CPU. Otherwise (offline CPUs, per-thread recordings) -1.
    /// </summary>
    private int CpuOfId(ulong id)
    {
        if (_cpuOfId is null)
        {
            _cpuOfId = [];
            var cpus = _meta.CpuCount;
            if (cpus > 0 && _meta.OnlineCpus == cpus)
                foreach (var attr in _meta.Attrs)
                    if (attr.Ids.Length == cpus)
                        for (var i = 0; i < cpus; i++) _cpuOfId.TryAdd(attr.Ids[i], i);
        }

        return _cpuOfId.TryGetValue(id, out var cpu) ? cpu : -1;
    }

    public void Dispose() => _handle.Dispose();


    private static string Expected(TraceFormatException e)
    {
        var prefix = $"{e.File}: at offset {e.Offset}: ";
        return "expected "
            + (e.Message.StartsWith(prefix, StringComparison.Ordinal) ? e.Message[prefix.Length..] : e.Message);
    }
}
