using System.Buffers.Binary;
using System.Globalization;
using Microsoft.Win32.SafeHandles;
using TraceLab.Core;
using TraceLab.Formats.Etw;
using TraceLab.Formats.Registry;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Formats.Etl;

/// <summary>
/// Reads an ETW .etl file without Windows: the chain of buffer records (compressed ones decompressed), each CPU's
/// buffers in fill order, merged k-way on time stamps, every event header kind walked by its size, and the kernel
/// events TraceLab models mapped by <see cref="EtwKernelEventMapper"/>. Memory holds one buffer per CPU plus an
/// index of buffer headers (docs/formats.md, ".etl").
/// </summary>
/// <remarks>
/// Timestamps are nanoseconds since the session start (the logfile header event). ETW reports lost events as one
/// total, so <see cref="TraceInfo.LostEventsPerCpu"/> holds a single element; buffers a CPU flagged as following a
/// loss are counted per CPU in <see cref="TraceInfo.PagesWithMissedEvents"/>.
/// </remarks>
public sealed class EtlFileReader : IStackTraceReader
{
    /// <summary>Records per CPU <see cref="HasStacks"/> looks at for a StackWalk event.</summary>
    private const int StackProbeRecords = 256;

    /// <summary>Bytes <see cref="LooksLikeEtl"/> needs: the first buffer header and the first event's 8-byte
    /// start.</summary>
    public const int SniffLength = EtlBufferHeader.Size + 8;

    private const int CancellationCheckMask = 0xFFFF;

    private readonly SafeFileHandle _file;
    private readonly string _path;
    private readonly bool _salvage;
    private readonly EtlBufferIndex _index;
    private readonly EtlClock _clock;
    private readonly EtlEventDispatcher _dispatcher;
    private KernelEvent _event;
    private bool _read;

    private EtlFileReader(SafeFileHandle file, string path, bool salvage, EtlLogfileHeader header, EtlBufferIndex index)
    {
        _file = file;
        _path = path;
        _salvage = salvage;
        _index = index;
        Header = header;
        _clock = new EtlClock(header.StartTimestamp, header.TicksPerSecond);
        Threads = new ThreadTable();
        Processes = new ThreadProcessMap();
        _dispatcher = new EtlEventDispatcher(new EtwKernelEventMapper(Threads, Processes));
        var missed = new long[index.PerCpu.Count];
        for (var cpu = 0; cpu < missed.Length; cpu++) missed[cpu] = index.PerCpu[cpu].Count(b => b.Header.MarksLoss);
        Info = new TraceInfo
        {
            Backend = "etw",
            TraceFile = path,
            // A damaged count must not size per-CPU tables: beyond the 11-bit processor index it is not believed.
            CpuCount = header.NumberOfProcessors is > 0 and <= EtlBufferIndex.MaxCpus
                ? Math.Max(header.NumberOfProcessors, index.PerCpu.Count)
                : Math.Max(1, index.PerCpu.Count),
            TraceClock = header.ClockName,
            KernelRelease = $"Windows {header.OsMajor}.{header.OsMinor}.{header.OsBuild}",
            LostEventsPerCpu = [header.EventsLost],
            PagesWithMissedEvents = missed.Any(n => n > 0) ? missed : null,
            Damage = JoinNotes(BuffersLostNote(header), index.Damage),
            SkippedBytesPerCpu = index.Damage is null ? null : PerCpu(index.DamagedCpu, index.SkippedBytes),
        };
    }

    public TraceInfo Info { get; private set; }
    public ThreadTable Threads { get; }

    private readonly EtlStacks _stacks = new();
    private bool? _hasStacks;

    /// <summary>
    /// True when the first records of some CPU hold a StackWalk event (the trace was recorded with stack walking);
    /// a trace whose stack walks start later reads without stacks.
    /// </summary>
    public bool HasStacks => _hasStacks ??= ProbeStacks();

    /// <inheritdoc/>
    public StackTable Stacks => _stacks.Table;

    /// <summary>From the Image load and rundown events: module+offset names (PDBs are not read).</summary>
    public ProcessMaps Maps => _stacks.Maps;

    /// <summary>ETW's CSwitch stack walk is the incoming thread's (WPA's New Thread Stack).</summary>
    public bool SwitchStacksAreOfNextThread => true;

    /// <summary>StackWalk events and stack-key references that followed no event of theirs.</summary>
    public long OrphanStackWalks => _stacks.Orphans;

    /// <summary>Stacks with a cached part (stack-key reference) whose key the trace never defined.</summary>
    public long UndefinedStackKeys => _stacks.UndefinedKeys;

    /// <inheritdoc/>
    public IReadOnlyList<string> StackNotes
    {
        get
        {
            var notes = new List<string>();
            if (OrphanStackWalks > 0)
                notes.Add(OrphanStackWalks.ToString("N0", CultureInfo.InvariantCulture)
                    + " stack walks or stack-key references followed no event of theirs (another timestamp): left out");
            if (UndefinedStackKeys > 0)
                notes.Add(UndefinedStackKeys.ToString("N0", CultureInfo.InvariantCulture)
                    + " stacks reference a cached stack key the trace never defines (no KeyDelete or KeyRundown for "
                    + "it): that part of their frames is missing");
            return notes;
        }
    }

    private bool ProbeStacks()
    {
        foreach (var s in OpenStreams())
        {
            for (var i = 0; i < StackProbeRecords && s.MoveNext(); i++)
                if (EtlStacks.IsStackWalk(s.Current) || EtlStacks.IsKeyReference(s.Current)) return true;
        }

        return false;
    }
    public EtlLogfileHeader Header { get; }

    /// <summary>Thread → process and process → image name, filled while reading.</summary>
    public ThreadProcessMap Processes { get; }

    /// <summary>Buffer records in the file, the header buffer included.</summary>
    public long Buffers => _index.Buffers;

    /// <summary>Events left undecoded because their version is newer than TraceLab knows (Other events).</summary>
    public long NewerVersionEvents => _dispatcher.NewerVersionEvents;

    /// <summary>Records of header kinds this reader does not know, skipped by their size.</summary>
    public long UnknownHeaderEvents => _dispatcher.UnknownHeaderEvents;

    /// <summary>Sees every record in delivery order before it is mapped (tests count event kinds with it).</summary>
    internal Action<EtlEventRecord, int>? RecordObserver { get; set; }

    /// <summary>
    /// Sees every record with its raw payload before it is mapped (tests decode payloads on their own).
    /// </summary>
    internal EtlPayloadObserver? PayloadObserver { get; set; }

    /// <summary>Events whose time stamp went back within their CPU (damage); delivered at the previous time.</summary>
    public long TimeWentBack { get; private set; }

    /// <summary>
    /// True when <paramref name="head"/> (at least <see cref="SniffLength"/> bytes of a file's start) is an .etl
    /// header buffer: an uncompressed buffer of type HEADER whose first event is the logfile header (a system header
    /// with hook 0x0000), as <see cref="EtlSignature"/> describes.
    /// </summary>
    public static bool LooksLikeEtl(ReadOnlySpan<byte> head) =>
        EtlSignature.Matches(head) && !EtlBufferHeader.Read(head).IsCompressed;

    /// <exception cref="TraceFormatException">Not an .etl file, or its header or (without salvage) a buffer is
    /// damaged.</exception>
    public static EtlFileReader Open(string path, TraceReadOptions? options = null) =>
        Open(File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.Read, FileOptions.RandomAccess), path,
            options);

    /// <summary>
    /// Reads the .etl open as <paramref name="file"/> (the reader owns the handle from here on, also when this
    /// throws); <paramref name="path"/> is what messages and <see cref="Info"/> call it (an archive's entry, say).
    /// </summary>
    public static EtlFileReader Open(SafeFileHandle file, string path, TraceReadOptions? options = null)
    {
        var salvage = (options ?? TraceReadOptions.Default).Salvage;
        try
        {
            var header = ReadLogfileHeader(file, path);
            var maxEventBytes = header.BufferSize is > EtlBufferHeader.Size and <= EtlBufferIndex.MaxBufferSize
                ? header.BufferSize - EtlBufferHeader.Size
                : EtlBufferIndex.MaxBufferSize - EtlBufferHeader.Size;
            var index = EtlBufferIndex.Build(file, path, maxEventBytes, salvage);
            return new EtlFileReader(file, path, salvage, header, index);
        }
        catch
        {
            file.Dispose();
            throw;
        }
    }

    private static EtlLogfileHeader ReadLogfileHeader(SafeFileHandle file, string path)
    {
        var length = RandomAccess.GetLength(file);
        Span<byte> head = stackalloc byte[EtlBufferHeader.Size + EtlEventParser.SystemHeaderSize];
        if (length < head.Length || RandomAccess.Read(file, head, 0) < head.Length || !LooksLikeEtl(head))
        {
            throw new TraceFormatException(path, 0,
                "an ETW .etl file (a 72-byte buffer header, then the logfile header event: marker C0 02 or C0 01, "
                + "hook 0)");
        }

        var first = EtlBufferHeader.Read(head);
        if (first.BufferSize > length)
            throw new TraceFormatException(path, 0, $"a {first.BufferSize}-byte header buffer (the file has {length})");
        var events = new byte[first.EventBytes];
        EtlFileIo.ReadExactly(file, events, EtlBufferHeader.Size);
        var r = new EtlEventRecord();
        EtlLogfileHeader? header = null;
        if (EtlEventParser.Next(events, 0, ref r) == EtlParseResult.Event)
        {
            var payload = events.AsSpan(r.PayloadOffset, r.PayloadLength);
            header = EtlLogfileHeader.TryRead(payload, r.PointerSize, r.RawTimestamp);
        }

        if (header is null)
        {
            throw new TraceFormatException(path, EtlBufferHeader.Size,
                "a complete TRACE_LOGFILE_HEADER (0x110 or 0x118 bytes)");
        }

        if (header.TicksPerSecond <= 0)
        {
            throw new TraceFormatException(path, EtlBufferHeader.Size,
                $"a clock rate above 0 (clock type {header.ClockType}, PerfFreq {header.PerfFreq}, "
                + $"CPU MHz {header.CpuSpeedMHz})");
        }

        return header;
    }

    public void Read(IKernelEventSink sink, CancellationToken cancellationToken = default)
    {
        if (_read)
            throw new InvalidOperationException("EtlFileReader.Read streams the file once; open it again to re-read.");
        _read = true;
        var streams = OpenStreams();
        var merge = new EtlStreamHeap(streams.Count);
        foreach (var s in streams)
            if (s.MoveNext()) merge.Push(s);

        long count = 0, first = 0, last = 0, shortPayloads = 0;
        var stacks = HasStacks;
        while (merge.Count > 0)
        {
            var s = merge.Top;
            RecordObserver?.Invoke(s.Current, s.Cpu);
            PayloadObserver?.Invoke(s.Current, s.Payload);
            if (stacks && ReadStackRecord(s))
            {
                if (s.MoveNext()) merge.ReplaceTop(s);
                else merge.Pop();
                continue;
            }

            if (_dispatcher.Map(s.Current, s.Cpu, s.Timestamp, s.Payload, ref _event))
            {
                var time = s.Timestamp;
                // The event's stack walks follow it in its CPU's stream: take them before delivering it.
                if (stacks && !AttachStacks(s, ref _event))
                {
                    merge.Pop();
                    Deliver(sink, ref count, ref first, ref last, time, cancellationToken);
                    continue;
                }

                Deliver(sink, ref count, ref first, ref last, time, cancellationToken);
                if (stacks)
                {
                    merge.ReplaceTop(s);
                    continue;
                }
            }
            else if (!_salvage)
            {
                throw new TraceFormatException(_path, s.FileOffset, string.Create(CultureInfo.InvariantCulture,
                    $"a payload long enough for its event (hook 0x{s.Current.Hook:x4} / {s.Current.Guid} opcode "
                    + $"{s.Current.Opcode} version {s.Current.Version}), found {s.Current.PayloadLength} bytes"));
            }
            else shortPayloads++;

            if (s.MoveNext()) merge.ReplaceTop(s);
            else merge.Pop();
        }

        Finish(streams, count, first, last, shortPayloads);
    }

    private void Deliver(IKernelEventSink sink, ref long count, ref long first, ref long last, long time,
        CancellationToken cancellationToken)
    {
        sink.OnEvent(in _event);
        if (count == 0) first = time;
        last = time;
        if ((++count & CancellationCheckMask) == 0) cancellationToken.ThrowIfCancellationRequested();
    }

    /// <summary>
    /// An Image event builds the maps (and is delivered as before); a StackWalk event met here belongs to no
    /// delivered event: counted, and not an event itself (true).
    /// </summary>
    private bool ReadStackRecord(EtlCpuStream s)
    {
        if (EtlStacks.IsImage(s.Current)) _stacks.Image(s.Current, s.Payload, s.Timestamp);
        else if (EtlStacks.IsStackRecord(s.Current))
        {
            switch (s.Current.Opcode)
            {
                case EtwKernelEvents.StackWalkStack or EtwKernelEvents.StackWalkKeyKernel
                    or EtwKernelEvents.StackWalkKeyUser:
                    _stacks.Orphan();
                    break;
                case EtwKernelEvents.StackWalkKeyDelete or EtwKernelEvents.StackWalkKeyRundown:
                    _stacks.Define(s.Current, s.Payload);
                    break;
            }
            return true;
        }

        return false;
    }

    /// <summary>
    /// Moves <paramref name="s"/> past the event just mapped and the StackWalk events that follow it with its
    /// timestamp, the first giving <paramref name="e"/> its stack (a switch's only when it is the incoming thread's);
    /// false when the stream has ended.
    /// </summary>
    private bool AttachStacks(EtlCpuStream s, ref KernelEvent e)
    {
        var raw = s.Current.RawTimestamp;
        var time = e.Timestamp;
        int walked = 0, process = 0;
        ulong? kernelKey = null, userKey = null;
        var more = false;
        while (s.MoveNext())
        {
            int thread;
            if (EtlStacks.IsStackWalk(s.Current))
            {
                var id = _stacks.Intern(s.Payload, s.Current.PointerSize, raw, time, out thread);
                if (id == 0)
                {
                    more = true; // another event's (or damaged): read as an orphan
                    break;
                }

                if (walked == 0 && IsOwnStack(e, thread))
                {
                    walked = id;
                    process = _stacks.Table.Process(id);
                }
            }
            else if (EtlStacks.IsKeyReference(s.Current))
            {
                if (!EtlStacks.Reference(s.Payload, s.Current.PointerSize, raw, out var p, out thread, out var key))
                {
                    more = true;
                    break;
                }

                if (!IsOwnStack(e, thread)) continue;
                if (s.Current.Opcode == EtwKernelEvents.StackWalkKeyKernel) kernelKey ??= key;
                else userKey ??= key;
                process = p;
            }
            else
            {
                more = true;
                break;
            }
        }

        if (e.StackId == 0)
            e.Stack = kernelKey is null && userKey is null ? walked
                : _stacks.Keyed(process, time, walked, kernelKey, userKey);
        return more;
    }

    /// <summary>A stack record of a thread is its event's: any thread's for most, the incoming one's for a switch.
    /// </summary>
    private static bool IsOwnStack(in KernelEvent e, int thread) =>
        e.Kind != KernelEventKind.Switch || thread == e.NextTid;

    private List<EtlCpuStream> OpenStreams()
    {
        var compressedMax = 0;
        foreach (var b in _index.PerCpu.SelectMany(cpu => cpu))
        {
            if (b.Header.IsCompressed)
                compressedMax = Math.Max(compressedMax, b.Header.BufferSize - EtlBufferHeader.Size);
        }

        var scratch = GC.AllocateUninitializedArray<byte>(compressedMax);
        var streams = new List<EtlCpuStream>();
        for (var cpu = 0; cpu < _index.PerCpu.Count; cpu++)
        {
            if (_index.PerCpu[cpu].Length > 0)
                streams.Add(new EtlCpuStream(_file, _path, cpu, _index.PerCpu[cpu], _clock, _salvage, scratch));
        }

        return streams;
    }

    private void Finish(List<EtlCpuStream> streams, long count, long first, long last, long shortPayloads)
    {
        // Every key definition has been read: the stacks with cached parts get their frames.
        _stacks.ResolveKeys();
        // A new, complete TraceInfo: the one handed out before the read is never written to.
        Info = Info with
        {
            EventCount = count,
            FirstTimestamp = first,
            LastTimestamp = last,
            UnknownEvents = _dispatcher.UnknownHeaderEvents,
            SkippedFormats = _dispatcher.NewerFormats,
        };
        TimeWentBack = streams.Sum(s => s.TimeWentBack);
        var damaged = streams.Where(s => s.Damage is not null).ToList();
        if (damaged.Count == 0 && shortPayloads == 0) return;

        // A damaged buffer's CPU can be any number its header claims: the array grows to hold it.
        var cpus = Math.Max(Math.Max(Info.CpuCount, _index.PerCpu.Count),
            damaged.Select(s => s.Cpu + 1).DefaultIfEmpty(0).Max());
        var skipped = Info.SkippedBytesPerCpu ?? [];
        if (skipped.Length < cpus) Array.Resize(ref skipped, cpus);
        foreach (var s in damaged) if (s.Cpu >= 0) skipped[s.Cpu] += s.SkippedBytes;
        var bytes = damaged.Sum(s => s.SkippedBytes);
        var shortNote = shortPayloads > 0
            ? string.Create(CultureInfo.InvariantCulture,
                $", {shortPayloads} events with a payload too short for their kind left out")
            : "";
        var firstNote = damaged.Count > 0 ? $" (first: {damaged[0].Damage})" : "";
        var note = string.Create(CultureInfo.InvariantCulture,
            $"salvaged a damaged .etl: {bytes:N0} bytes of events skipped in damaged buffers{shortNote}{firstNote}");
        Info = Info with { SkippedBytesPerCpu = skipped, Damage = JoinNotes(Info.Damage, note) };
    }

    private static string? BuffersLostNote(EtlLogfileHeader h) => h.BuffersLost > 0
        ? $"the logger lost {h.BuffersLost} whole buffers (BuffersLost in the .etl header): "
          + "the events in them are missing"
        : null;

    private static string? JoinNotes(string? a, string? b) => a is null ? b : b is null ? a : a + "; " + b;

    private static long[] PerCpu(int cpu, long value)
    {
        var a = new long[cpu + 1];
        a[cpu] = value;
        return a;
    }

    public void Dispose() => _file.Dispose();
}

/// <summary>A record and its raw payload, for <see cref="EtlFileReader.PayloadObserver"/>.</summary>
internal delegate void EtlPayloadObserver(in EtlEventRecord record, ReadOnlySpan<byte> payload);
