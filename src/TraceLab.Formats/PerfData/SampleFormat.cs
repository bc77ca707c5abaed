using System.Buffers.Binary;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using TraceLab.Core;

namespace TraceLab.Formats.PerfData;

/// <summary>What <see cref="SampleFormat.Parse"/> found in a PERF_RECORD_SAMPLE body.</summary>
internal enum SampleParse
{
    /// <summary>A tracepoint sample with time, CPU and a non-empty raw payload: an event.</summary>
    Event,
    /// <summary>A sample without raw payload (an attribute that records none, or an empty one): not an event.</summary>
    NoPayload,
    /// <summary>The sample id belongs to none of the file's attributes.</summary>
    UnknownId,
    /// <summary>The body is too short for its sample type.</summary>
    TooShort,
}

/// <summary>
/// The sample layouts of a file's attributes and how to tell which one a sample uses: parses time, CPU and raw
/// payload out of a sample body. Shared by the file scan and the cursors that read samples again at delivery.
/// </summary>
internal sealed class SampleFormat
{
    private readonly SampleLayout _layout;
    private readonly SampleLayout?[] _layoutByAttr;
    private readonly ulong _firstRegsUser;
    private readonly ulong[] _regsUserByAttr = [];
    private readonly Dictionary<ulong, int>? _attrById;
    /// <summary>
    /// The same as <see cref="_attrById"/> as an array indexed by id − <see cref="_minId"/> when the ids are close
    /// together (perf numbers them consecutively): a sample's lookup is then an array read, not a hash lookup.
    /// Entries are the attribute index + 1 (0: no attribute has the id).
    /// </summary>
    private readonly ushort[]? _attrByIdOffset;
    private readonly ulong _minId;
    /// <summary>
    /// Per id − <see cref="_minId"/> (with <see cref="_attrByIdOffset"/>): where time, CPU and raw size sit for that
    /// id's layout when they are at fixed offsets, so that a sample's parse is one table read (RawSize 0: take the
    /// general path).
    /// </summary>
    private readonly FastLayout[]? _fastById;

    private readonly record struct FastLayout(int Time, int Cpu, int RawSize);
    private readonly int _idOffset;
    private const int MaxIdTable = 1 << 16;

    /// <summary>
    /// No tracepoint was recorded: no sample is an event (the task records are, see <see cref="TaskRecords"/>).
    /// </summary>
    private readonly bool _none;

    private SampleFormat()
    {
        _none = true;
        _layout = new SampleLayout(0, 0);
        _layoutByAttr = [];
    }

    /// <summary>For a file without tracepoints: every sample is <see cref="SampleParse.NoPayload"/>.</summary>
    public static SampleFormat WithoutTracepoints() => new();

    /// <exception cref="TraceFormatException">The attributes cannot give time-ordered tracepoint samples.</exception>
    public SampleFormat(IReadOnlyList<PerfEventAttr> attrs, PerfEventAttr first, string path)
    {
        _layout = new SampleLayout(first.SampleType, first.ReadFormat, first.RegsUser);
        _firstRegsUser = first.RegsUser;
        if (!_layout.HasTime || !_layout.HasCpu || !_layout.HasRaw)
            throw new TraceFormatException(
                $"{path}: expected tracepoint samples with time, CPU and raw data (perf record -a records them)");
        // Attributes whose samples differ in layout are told apart by the sample id (at the same place in all).
        if (attrs.Any(a => a.SampleType != first.SampleType || a.ReadFormat != first.ReadFormat
            || a.RegsUser != first.RegsUser))
        {
            _idOffset = SampleLayout.IdOffset(first.SampleType);
            if (_idOffset < 0)
                throw new TraceFormatException($"{path}: expected sample ids to tell events of different layouts apart "
                    + $"(sample_type ID or IDENTIFIER)");
            _attrById = new Dictionary<ulong, int>();
            _layoutByAttr = new SampleLayout?[attrs.Count];
            _regsUserByAttr = [.. attrs.Select(a => a.RegsUser)];
            for (var i = 0; i < attrs.Count; i++)
            {
                var a = attrs[i];
                _layoutByAttr[i] = new SampleLayout(a.SampleType, a.ReadFormat, a.RegsUser);
                foreach (var id in a.Ids) _attrById.TryAdd(id, i);
            }

            if (_attrById.Count > 0 && attrs.Count < ushort.MaxValue)
            {
                _minId = _attrById.Keys.Min();
                var span = _attrById.Keys.Max() - _minId;
                if (span < MaxIdTable)
                {
                    _attrByIdOffset = new ushort[span + 1];
                    _fastById = new FastLayout[span + 1];
                    foreach (var (id, i) in _attrById)
                    {
                        _attrByIdOffset[id - _minId] = (ushort)(i + 1);
                        var layout = _layoutByAttr[i]!;
                        if (layout.Fast) _fastById[id - _minId] =
                            new FastLayout(layout.TimeOffset, layout.CpuOffset, layout.RawSizeOffset);
                    }
                }
            }
            var tidOffsets = _layoutByAttr.Select(l => l!.TidOffset).Distinct().ToList();
            if (tidOffsets.Count == 1 && BitConverter.IsLittleEndian) UniformTidOffset = tidOffsets[0];
        }
        else
        {
            _layoutByAttr = [];
            if (BitConverter.IsLittleEndian) UniformTidOffset = _layout.TidOffset;
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public SampleParse Parse(ReadOnlySpan<byte> body, out long time, out int cpu, out ReadOnlySpan<byte> raw)
    {
        // Fast path, one table read: an id whose layout has time, CPU and raw at fixed offsets, a body long enough,
        // a non-empty payload. Anything else takes the general path below, which decides the same way.
        if (_fastById is { } table && body.Length >= _idOffset + 8)
        {
            ref var b = ref MemoryMarshal.GetReference(body);
            var k = Unsafe.ReadUnaligned<ulong>(ref Unsafe.Add(ref b, _idOffset)) - _minId;
            if (k < (ulong)table.Length)
            {
                var f = table[(int)k];
                if (f.RawSize > 0 && body.Length >= f.RawSize + 4)
                {
                    var size = Unsafe.ReadUnaligned<uint>(ref Unsafe.Add(ref b, f.RawSize));
                    if (size - 1 < (uint)(body.Length - f.RawSize - 4))
                    {
                        time = Unsafe.ReadUnaligned<long>(ref Unsafe.Add(ref b, f.Time));
                        cpu = Unsafe.ReadUnaligned<int>(ref Unsafe.Add(ref b, f.Cpu));
                        raw = MemoryMarshal.CreateReadOnlySpan(ref Unsafe.Add(ref b, f.RawSize + 4), (int)size);
                        return SampleParse.Event;
                    }
                }
            }
        }

        return ParseChecked(body, out time, out cpu, out raw);
    }

    /// <summary>
    /// Where every sample's u32 pid, u32 tid sit when all layouts put them at one place, on a little-endian host (the
    /// scan then compares the tid in place); -1 otherwise (<see cref="TryThread"/> looks the layout up). Layouts
    /// that differ elsewhere usually agree here: perf's own dummy event (no raw data) next to the tracepoints.
    /// </summary>
    public int UniformTidOffset { get; } = -1;

    /// <summary>
    /// The process and thread a sample was taken in (PERF_SAMPLE_TID: the task running when the tracepoint fired);
    /// false when its layout has no TID or the body is too short. Not part of <see cref="Parse"/>: the scan asks only
    /// when the thread on a CPU changed.
    /// </summary>
    public bool TryThread(ReadOnlySpan<byte> body, out int pid, out int tid)
    {
        pid = tid = 0;
        var layout = _layout;
        if (_attrById is not null)
        {
            if (body.Length < _idOffset + 8
                || !TryGetAttr(BinaryPrimitives.ReadUInt64LittleEndian(body[_idOffset..]), out var a)) return false;
            layout = _layoutByAttr[a]!;
        }

        var at = layout.TidOffset;
        if (_none || at < 0 || body.Length < at + 8) return false;
        pid = (int)BinaryPrimitives.ReadUInt32LittleEndian(body[at..]);
        tid = (int)BinaryPrimitives.ReadUInt32LittleEndian(body[(at + 4)..]);
        return true;
    }

    /// <summary>True when any attribute's samples carry a callchain (perf record -g).</summary>
    public bool HasCallchains =>
        !_none && (_layout.HasCallchain || _layoutByAttr.Any(l => l is { HasCallchain: true }));

    /// <summary>
    /// The sample's callchain (see <see cref="SampleLayout.TryCallchain"/>); false when its layout has none or the
    /// sample cannot be placed.
    /// </summary>
    public bool TryCallchain(ReadOnlySpan<byte> body, out ReadOnlySpan<byte> entries, out int pid, out int tid,
        out bool truncated)
    {
        entries = default;
        pid = tid = 0;
        truncated = false;
        if (_none) return false;
        var layout = _layout;
        if (_attrById is not null)
        {
            if (body.Length < _idOffset + 8
                || !TryGetAttr(BinaryPrimitives.ReadUInt64LittleEndian(body[_idOffset..]), out var a)) return false;
            layout = _layoutByAttr[a]!;
        }

        return layout.TryCallchain(body, out entries, out pid, out tid, out truncated);
    }

    /// <summary>
    /// True when any attribute's samples carry user registers and stacks (perf record --call-graph dwarf).
    /// </summary>
    public bool HasUserStacks =>
        !_none && (_layout.HasUserStack || _layoutByAttr.Any(l => l is { HasUserStack: true }));

    /// <summary>The sample's user registers and stack copy (see <see cref="SampleLayout.TryUserStack"/>).</summary>
    public bool TryUserStack(ReadOnlySpan<byte> body, out ReadOnlySpan<byte> registers, out ReadOnlySpan<byte> stack,
        out ulong registerMask)
    {
        registers = stack = default;
        registerMask = 0;
        if (_none) return false;
        var layout = _layout;
        registerMask = _firstRegsUser;
        if (_attrById is not null)
        {
            if (body.Length < _idOffset + 8
                || !TryGetAttr(BinaryPrimitives.ReadUInt64LittleEndian(body[_idOffset..]), out var a)) return false;
            layout = _layoutByAttr[a]!;
            registerMask = _regsUserByAttr[a];
        }

        return layout.TryUserStack(body, out registers, out stack);
    }

    private SampleParse ParseChecked(ReadOnlySpan<byte> body, out long time, out int cpu, out ReadOnlySpan<byte> raw)
    {
        if (_none)
        {
            time = 0;
            cpu = -1;
            raw = default;
            return SampleParse.NoPayload;
        }

        var layout = _layout;
        if (_attrById is not null)
        {
            time = 0;
            cpu = -1;
            raw = default;
            if (body.Length < _idOffset + 8
                || !TryGetAttr(BinaryPrimitives.ReadUInt64LittleEndian(body[_idOffset..]), out var a))
                return SampleParse.UnknownId;
            layout = _layoutByAttr[a]!;
            if (!layout.HasRaw) return SampleParse.NoPayload;
        }

        if (!layout.TryRead(body, out time, out cpu, out raw)) return SampleParse.TooShort;
        return raw.IsEmpty ? SampleParse.NoPayload : SampleParse.Event;
    }

    private bool TryGetAttr(ulong id, out int attr)
    {
        if (_attrByIdOffset is { } table)
        {
            var k = id - _minId;
            attr = k < (ulong)table.Length ? table[(int)k] - 1 : -1;
            return attr >= 0;
        }

        return _attrById!.TryGetValue(id, out attr);
    }
}
