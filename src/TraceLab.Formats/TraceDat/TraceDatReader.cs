using System.Globalization;
using Microsoft.Win32.SafeHandles;
using TraceLab.Core;
using TraceLab.Formats.Ftrace;
using TraceLab.Formats.Registry;
using TraceLab.Formats.Symbols;

namespace TraceLab.Formats.TraceDat;

/// <summary>
/// Reads trace-cmd trace.dat files (v6, and v7 uncompressed or compressed with zlib or zstd): metadata at
/// <see cref="Open"/>, then the events of one buffer (the top-level one unless
/// <see cref="TraceReadOptions.BufferName"/> names an instance) from every CPU merged in timestamp order. ftrace's
/// kernel and user stack records are not events: each gives its stack to the event before it on its CPU.
/// </summary>
public sealed class TraceDatReader : IStackTraceReader
{
    private readonly SafeFileHandle _handle;
    private readonly string _path;
    private readonly TraceDatMetadata _meta;
    private readonly KernelEventDecoder _decoder;
    private readonly SalvageLog? _salvage;
    private readonly string _buffer;
    private bool _read;
    /// <summary>The file's stack record formats; null when it has none.</summary>
    private readonly FtraceStackRecords? _stackRecords;
    private bool? _hasStacks;
    /// <summary>A kernel stack's frames, then a user stack's, before they are interned together.</summary>
    private readonly ulong[] _frames = new ulong[FtraceStackRecords.MaxKernelFrames + UserSlots];
    private const int UserSlots = 64;

    private TraceDatReader(SafeFileHandle handle, string path, TraceDatMetadata meta, bool salvage, string buffer)
    {
        _handle = handle;
        _path = path;
        _meta = meta;
        _buffer = buffer;
        _salvage = salvage ? new SalvageLog(meta.PageSize, meta.Damage.Where(d => d.Buffer == buffer)) : null;
        Threads = new ThreadTable();
        SavedCmdlines.LoadInto(meta.Cmdlines, Threads);
        _decoder = new KernelEventDecoder(meta.Formats, Threads);
        _stackRecords = FtraceStackRecords.Of(meta.Formats);
        Info = new TraceInfo
        {
            Backend = "tracefs",
            TraceFile = path,
            CpuCount = meta.CpuCount,
            TraceClock = meta.BufferClocks.GetValueOrDefault(buffer) ?? meta.TraceClock,
            KernelRelease = KernelReleaseOf(meta.Uname),
            Buffers = meta.Buffers.ToArray(),
            Buffer = buffer,
            LostEventsPerCpu = LostPerCpu(meta, buffer),
            PagesWithMissedEvents = new long[meta.CpuCount],
            SkippedFormats = meta.SkippedFormats,
        };
        _salvage?.Describe(Info);
    }

    public TraceInfo Info { get; private set; }
    public ThreadTable Threads { get; }

    /// <summary>
    /// True when the buffer holds ftrace stack records (<c>options/stacktrace</c>, <c>userstacktrace</c>): the
    /// first records of each CPU are looked at once, so a trace whose stacks start late (a <c>stacktrace</c>
    /// trigger on a rare event) reads as one without stacks, its records passed on as other events.
    /// </summary>
    public bool HasStacks => _hasStacks ??= _stackRecords is not null && StackRecordsNearTheStart();

    public StackTable Stacks { get; } = new();

    /// <summary>Empty: a trace.dat records no memory maps, so user frames stay addresses.</summary>
    public ProcessMaps Maps { get; } = new();

    /// <summary>
    /// The recorded kernel's symbols, from the kallsyms trace-cmd stored in the file: kernel frames are named as on
    /// the machine that recorded them. Null when the file holds none (or an empty or damaged one).
    /// </summary>
    public Kallsyms? RecordedKernelSymbols()
    {
        try
        {
            var text = TraceDatMetadataParser.Kallsyms(new BoundedFileReader(_handle, _path), _meta);
            if (string.IsNullOrEmpty(text)) return null;
            var symbols = Kallsyms.Parse(new StringReader(text));
            return symbols.Count > 0 ? symbols : null;
        }
        catch (TraceFormatException)
        {
            return null;
        }
    }

    /// <summary>Stack records with no event before them on their CPU (the first records of a buffer).</summary>
    public long OrphanStackRecords { get; private set; }

    /// <summary>Event formats found in the file.</summary>
    public IReadOnlyList<FtraceEventFormat> Formats => _meta.Formats;

    /// <summary>Trace-file version (6 or 7).</summary>
    public int FileVersion => _meta.Version;

    /// <summary>The v7 compression algorithm ("none", "zlib", "zstd"); "none" for v6.</summary>
    public string Compression => _meta.Compression;

    /// <exception cref="TraceFormatException">
    /// The file is truncated, corrupt or of an unsupported kind (when salvaging: its metadata is), or has no buffer
    /// of the requested name.
    /// </exception>
    public static TraceDatReader Open(string path, TraceReadOptions? options = null)
    {
        options ??= TraceReadOptions.Default;
        var salvage = options.Salvage;
        var handle = File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.Read, FileOptions.RandomAccess);
        try
        {
            var meta = TraceDatMetadataParser.Parse(new BoundedFileReader(handle, path), salvage);
            var buffer = TraceDatBuffers.Select(meta, options.BufferName, path);
            return new TraceDatReader(handle, path, meta, salvage, buffer);
        }
        catch
        {
            handle.Dispose();
            throw;
        }
    }

    /// <summary>Streams every event once; a second call throws because the reader is single-pass.</summary>
    public void Read(IKernelEventSink sink, CancellationToken cancellationToken = default)
    {
        if (_read)
            throw new InvalidOperationException("TraceDatReader.Read streams the file once; open it again to re-read.");
        _read = true;

        var ranges = BufferRanges();
        using var data = TraceDatData.Open(_handle, _path, ranges.Count);
        using var codec = CodecFor(ranges);
        var scratch = new ChunkScratch();
        var cursors = new List<CpuCursor>();
        try
        {
            var active = new List<CpuCursor>();
            foreach (var range in ranges)
            {
                var c = OpenCursor(data, codec, scratch, range);
                cursors.Add(c);
                if (Advance(c)) active.Add(c);
                else Finish(c);
            }

            Merge(active.ToArray(), sink, cancellationToken);
        }
        finally
        {
            foreach (var c in cursors) c.Dispose();
        }
    }

    /// <summary>Delivers the cursors' events in timestamp order, ties to the cursor earlier in the array.</summary>
    private void Merge(CpuCursor[] active, IKernelEventSink sink, CancellationToken cancellationToken)
    {
        var n = active.Length;
        var run = new RunState { Sink = sink, Cancellation = cancellationToken, Stacks = HasStacks };
        while (n > 0)
        {
            // The earliest head, ties to the lowest index; the cursor then keeps the floor for as long as its next
            // event would still win that same choice: earlier than every head before it, not later than every head
            // after it (the other heads do not move meanwhile).
            var best = 0;
            var bestTs = active[0].Timestamp;
            for (var i = 1; i < n; i++)
            {
                var ts = active[i].Timestamp;
                if (ts < bestTs) { bestTs = ts; best = i; }
            }

            var limit = long.MaxValue;
            for (var i = 0; i < n; i++)
            {
                if (i == best) continue;
                // bestTs < head here, so head - 1 cannot underflow.
                var bound = i < best ? active[i].Timestamp - 1 : active[i].Timestamp;
                if (bound < limit) limit = bound;
            }

            var cur = active[best];
            if (!DeliverRun(cur, limit, ref run))
            {
                Finish(cur);
                active[best] = active[n - 1];
                n--;
            }
        }

        var count = run.Count;
        var first = run.First;
        var last = run.Last;
        // A new, complete TraceInfo: the one handed out before the read is never written to.
        Info = Info with
        {
            EventCount = count,
            FirstTimestamp = first,
            LastTimestamp = last,
            UnknownEvents = _decoder.UnknownEventCount,
        };
        if (_salvage is not null) Info = _salvage.Describe(Info);
    }

    public void Dispose() => _handle.Dispose();

    /// <summary>What the delivery loop carries from one run to the next.</summary>
    private struct RunState
    {
        public IKernelEventSink Sink;
        public CancellationToken Cancellation;
        public KernelEvent Event;
        public long Count, First, Last;
        /// <summary>Stack records follow events (<see cref="HasStacks"/>).</summary>
        public bool Stacks;
    }

    /// <summary>
    /// Delivers <paramref name="cur"/>'s events, starting with its current one, while their timestamps stay at or
    /// below <paramref name="limit"/>. Returns false when the cursor is finished (its data ended, or damage when
    /// salvaging) and true when it stopped at an event past the limit, which stays current.
    /// </summary>
    private bool DeliverRun(CpuCursor cur, long limit, ref RunState run)
    {
        var sink = run.Sink;
        var count = run.Count;
        var cpu = cur.Cpu;
        var stacks = run.Stacks;
        while (true)
        {
            if (stacks && _stackRecords!.KindOf(cur.Payload) != FtraceStackKind.None)
            {
                // A stack record with no event before it on this CPU: the buffer's first, or after damage.
                OrphanStackRecords++;
                if (!cur.TryMoveNextPlain() && !Advance(cur))
                {
                    run.Count = count;
                    return false;
                }
                continue;
            }
            var ts = cur.Timestamp;
            if (!_decoder.Decode(cur.Payload, ts, cpu, ref run.Event))
            {
                var error = new TraceFormatException(_path, cur.PayloadFileOffset,
                    $"an event record long enough for its event type ({cur.Payload.Length} bytes is too short)");
                if (_salvage is null) throw error;
                _salvage.Add(cur, error);
                run.Count = count;
                return false;
            }

            // The records after the event, on its CPU, that are its stacks are read before it is delivered.
            var more = cur.TryMoveNextPlain() || Advance(cur);
            if (more && stacks) more = AttachStacks(cur, ref run.Event);
            sink.OnEvent(in run.Event);
            if (count == 0) run.First = ts;
            count++;
            run.Last = ts;
            // An exception leaves Read without totals, so the count only needs storing on the way out.
            if ((count & 0xFFFF) == 0) run.Cancellation.ThrowIfCancellationRequested();
            if (!more)
            {
                run.Count = count;
                return false;
            }

            if (cur.Timestamp > limit)
            {
                run.Count = count;
                return true;
            }
        }
    }

    /// <summary>
    /// Reads the stack records that follow <paramref name="e"/> on <paramref name="cur"/>'s CPU (a kernel stack, a
    /// user stack, or both) into one interned stack, kernel frames first, and moves past them. Returns false when
    /// the cursor ended.
    /// </summary>
    private bool AttachStacks(CpuCursor cur, ref KernelEvent e)
    {
        var records = _stackRecords!;
        int kernel = 0, user = 0, tgid = 0;
        var seen = FtraceStackKind.None;
        var more = true;
        while (records.KindOf(cur.Payload) is var kind && kind != FtraceStackKind.None)
        {
            bool cut;
            if (kind == FtraceStackKind.Kernel && seen == FtraceStackKind.None)
                kernel =
                    records.ReadKernel(cur.Payload, _frames.AsSpan(0, FtraceStackRecords.MaxKernelFrames), out cut);
            else if (kind == FtraceStackKind.User && seen != FtraceStackKind.User)
                user = records.ReadUser(
                    cur.Payload, _frames.AsSpan(FtraceStackRecords.MaxKernelFrames), out tgid, out cut);
            else
            {
                OrphanStackRecords++; // a second stack of one kind: not this event's
                cut = false;
            }
            if (cut) Stacks.Truncated++;
            seen = kind;
            if (!cur.TryMoveNextPlain() && !Advance(cur))
            {
                more = false;
                break;
            }
        }
        if (kernel + user == 0) return more;
        if (user > 0) _frames.AsSpan(FtraceStackRecords.MaxKernelFrames, user).CopyTo(_frames.AsSpan(kernel));
        var process = tgid > 0 ? tgid : Threads.TryGetProcess(e.CurrentTid, out var p) ? p : e.CurrentTid;
        e.Stack = Stacks.Intern(process, e.Timestamp, _frames.AsSpan(0, kernel + user), kernel);
        return more;
    }

    /// <summary>The read buffer's CPU data ranges that hold data.</summary>
    private List<CpuDataRange> BufferRanges() => _meta.Data.Where(r => r.Size != 0 && r.Buffer == _buffer).ToList();

    /// <summary>The codec of the ranges' compressed chunks; null when none is compressed.</summary>
    private ChunkCodec? CodecFor(List<CpuDataRange> ranges) =>
        ranges.Any(r => r.Compressed) ? ChunkCodec.For(_meta.Compression, _path, 0) : null;

    /// <summary>A cursor over one CPU's range, before its first record.</summary>
    private CpuCursor OpenCursor(TraceDatData data, ChunkCodec? codec, ChunkScratch scratch, CpuDataRange range)
    {
        var stream = range.Compressed ? new CompressedCpuStream(_handle, _path, codec!, scratch, range) : null;
        return new CpuCursor(data, _path, _meta.HeaderPage!, range, stream, _meta.Time.IsIdentity ? null : _meta.Time);
    }

    /// <summary>Whether any of the first records of each CPU of the buffer is a stack record.</summary>
    private bool StackRecordsNearTheStart()
    {
        const int RecordsPerCpu = 256;
        var ranges = BufferRanges();
        try
        {
            using var data = TraceDatData.Open(_handle, _path, ranges.Count);
            using var codec = CodecFor(ranges);
            var scratch = new ChunkScratch();
            foreach (var range in ranges)
            {
                using var c = OpenCursor(data, codec, scratch, range);
                for (var i = 0; i < RecordsPerCpu && c.MoveNext(); i++)
                    if (_stackRecords!.KindOf(c.Payload) != FtraceStackKind.None) return true;
            }
        }
        catch (TraceFormatException)
        {
            // Damage near the start is Read's to report (or salvage); stacks or not, it says so there.
        }
        return false;
    }

    private bool Advance(CpuCursor c)
    {
        try
        {
            return c.MoveNext();
        }
        catch (TraceFormatException error) when (_salvage is not null)
        {
            _salvage.Add(c, error);
            return false;
        }
    }

    /// <summary>A cursor at its end: its missed-event pages are counted and its window released.</summary>
    private void Finish(CpuCursor c)
    {
        c.Dispose();
        var pages = Info.PagesWithMissedEvents!;
        if (c.Cpu >= 0 && c.Cpu < pages.Length) pages[c.Cpu] += c.PagesWithMissedEvents;
    }


    /// <summary>The release is the third word of "Linux host 6.18.0 #1 SMP ... x86_64".</summary>
    private static string? KernelReleaseOf(string? uname)
    {
        if (uname is null) return null;
        var parts = uname.Split(' ', StringSplitOptions.RemoveEmptyEntries);
        return parts.Length >= 3 ? parts[2] : uname;
    }

    /// <summary>Loss counts of the buffer being read, per CPU; null when the file has none for it.</summary>
    private static long[]? LostPerCpu(TraceDatMetadata meta, string buffer)
    {
        if (!meta.LostByBuffer.TryGetValue(buffer, out var perCpu)) return null;
        var result = new long[meta.CpuCount];
        foreach (var (cpu, lost) in perCpu)
            if (cpu >= 0 && cpu < result.Length) result[cpu] += lost;
        return result;
    }
}
