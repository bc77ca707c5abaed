using System.Buffers.Binary;
using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace TraceLab.Formats.PerfData;

/// <summary>
/// Where the fields TraceLab needs sit in a PERF_RECORD_SAMPLE body of one sample_type / read_format, computed once
/// per attribute so that per sample only fixed-offset reads happen (variable parts only with group reads or
/// callchains, which a sched capture does not have).
/// </summary>
internal sealed class SampleLayout
{
    private readonly ulong _sampleType;
    private readonly ulong _readFormat;
    private readonly int _timeOffset;
    private readonly int _cpuOffset;
    private readonly int _tidOffset;
    /// <summary>Offset of READ or, when READ and CALLCHAIN are absent, of RAW; -1 when neither follows.</summary>
    private readonly int _variableStart;
    private readonly bool _fixedRaw;
    /// <summary>
    /// Time, CPU and a raw payload at fixed offsets on a little-endian host: <see cref="TryRead"/> checks the length
    /// once.
    /// </summary>
    private readonly bool _fast;

    /// <summary>Registers in PERF_SAMPLE_REGS_USER (popcount of sample_regs_user).</summary>
    private readonly int _userRegisters;

    public SampleLayout(ulong sampleType, ulong readFormat, ulong regsUser = 0)
    {
        _sampleType = sampleType;
        _readFormat = readFormat;
        _userRegisters = BitOperations.PopCount(regsUser);
        var p = 0;
        if (Has(PerfSampleType.Identifier)) p += 8;
        if (Has(PerfSampleType.Ip)) p += 8;
        _tidOffset = Has(PerfSampleType.Tid) ? p : -1;
        if (Has(PerfSampleType.Tid)) p += 8;
        _timeOffset = Has(PerfSampleType.Time) ? p : -1;
        if (Has(PerfSampleType.Time)) p += 8;
        if (Has(PerfSampleType.Addr)) p += 8;
        if (Has(PerfSampleType.Id)) p += 8;
        if (Has(PerfSampleType.StreamId)) p += 8;
        _cpuOffset = Has(PerfSampleType.Cpu) ? p : -1;
        if (Has(PerfSampleType.Cpu)) p += 8;
        if (Has(PerfSampleType.Period)) p += 8;
        _variableStart = p;
        _fixedRaw = !Has(PerfSampleType.Read) && !Has(PerfSampleType.Callchain);
        _fast = BitConverter.IsLittleEndian && _fixedRaw && HasTime && HasCpu && HasRaw;
    }

    /// <summary>
    /// True when time, CPU and the raw payload sit at fixed offsets (see <see cref="TryRead"/>'s fast path).
    /// </summary>
    public bool Fast => _fast;
    public int TimeOffset => _timeOffset;
    public int CpuOffset => _cpuOffset;
    /// <summary>Offset of the raw payload's u32 size when <see cref="Fast"/>.</summary>
    public int RawSizeOffset => _variableStart;

    /// <summary>Offset of the sample's u32 pid, u32 tid (PERF_SAMPLE_TID); -1 when the samples have none.</summary>
    public int TidOffset => _tidOffset;

    public bool HasTime => _timeOffset >= 0;
    public bool HasCpu => _cpuOffset >= 0;
    public bool HasRaw => Has(PerfSampleType.Raw);

    /// <summary>
    /// Reads time, CPU and the raw tracepoint payload. False when the body is too short for its layout.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool TryRead(ReadOnlySpan<byte> body, out long time, out int cpu, out ReadOnlySpan<byte> raw)
    {
        // Time and CPU lie before the raw size word, so one length check covers the three reads.
        if (_fast && body.Length >= _variableStart + 4)
        {
            ref var b = ref MemoryMarshal.GetReference(body);
            var size = Unsafe.ReadUnaligned<uint>(ref Unsafe.Add(ref b, _variableStart));
            if (size <= (uint)(body.Length - _variableStart - 4))
            {
                time = Unsafe.ReadUnaligned<long>(ref Unsafe.Add(ref b, _timeOffset));
                cpu = Unsafe.ReadUnaligned<int>(ref Unsafe.Add(ref b, _cpuOffset));
                raw = MemoryMarshal.CreateReadOnlySpan(ref Unsafe.Add(ref b, _variableStart + 4), (int)size);
                return true;
            }
        }

        return TryReadChecked(body, out time, out cpu, out raw);
    }

    private bool TryReadChecked(ReadOnlySpan<byte> body, out long time, out int cpu, out ReadOnlySpan<byte> raw)
    {
        time = 0;
        cpu = -1;
        raw = default;
        if (_timeOffset >= 0)
        {
            if (body.Length < _timeOffset + 8) return false;
            time = (long)BinaryPrimitives.ReadUInt64LittleEndian(body[_timeOffset..]);
        }

        if (_cpuOffset >= 0)
        {
            if (body.Length < _cpuOffset + 4) return false;
            cpu = (int)BinaryPrimitives.ReadUInt32LittleEndian(body[_cpuOffset..]);
        }

        if (!HasRaw) return true;
        var p = _variableStart;
        if (!_fixedRaw && !SkipVariable(body, ref p)) return false;
        if (p > body.Length - 4) return false;
        var size = BinaryPrimitives.ReadUInt32LittleEndian(body[p..]);
        p += 4;
        if (size > (uint)(body.Length - p)) return false;
        raw = body.Slice(p, (int)size);
        return true;
    }

    /// <summary>True when the samples carry a callchain (PERF_SAMPLE_CALLCHAIN: perf record -g).</summary>
    public bool HasCallchain => Has(PerfSampleType.Callchain);

    /// <summary>
    /// The sample's callchain entries (u64 each, context markers in line) and its thread; false when the layout has
    /// no callchain or no TID, or the body is too short for them. A count larger than the body leaves
    /// <paramref name="truncated"/> set and the entries that are there.
    /// </summary>
    public bool TryCallchain(ReadOnlySpan<byte> body, out ReadOnlySpan<byte> entries, out int pid, out int tid,
        out bool truncated)
    {
        entries = default;
        pid = tid = 0;
        truncated = false;
        if (!HasCallchain || _tidOffset < 0 || body.Length < _tidOffset + 8) return false;
        pid = (int)BinaryPrimitives.ReadUInt32LittleEndian(body[_tidOffset..]);
        tid = (int)BinaryPrimitives.ReadUInt32LittleEndian(body[(_tidOffset + 4)..]);
        var p = _variableStart;
        if (!SkipRead(body, ref p) || p > body.Length - 8) return false;
        var nr = BinaryPrimitives.ReadUInt64LittleEndian(body[p..]);
        p += 8;
        var room = (ulong)((body.Length - p) / 8);
        if (nr > room)
        {
            truncated = true;
            nr = room;
        }

        entries = body.Slice(p, (int)nr * 8);
        return true;
    }

    /// <summary>True when the samples carry user registers and a copy of the user stack (--call-graph dwarf).</summary>
    public bool HasUserStack => Has(PerfSampleType.RegsUser) && Has(PerfSampleType.StackUser)
        && !Has(PerfSampleType.BranchStack) && _userRegisters > 0;

    /// <summary>
    /// The sample's user registers (u64 each, in sample_regs_user's bit order) and copied user stack (its used part,
    /// dyn_size bytes); false when the layout has none, the sample has none (a kernel thread: abi 0, size 0) or the
    /// body is too short.
    /// </summary>
    public bool TryUserStack(ReadOnlySpan<byte> body, out ReadOnlySpan<byte> registers, out ReadOnlySpan<byte> stack)
    {
        registers = stack = default;
        if (!HasUserStack) return false;
        var p = _variableStart;
        if (!SkipVariable(body, ref p)) return false;
        if (Has(PerfSampleType.Raw))
        {
            if (p > body.Length - 4) return false;
            var size = BinaryPrimitives.ReadUInt32LittleEndian(body[p..]);
            if (size > (uint)(body.Length - p - 4)) return false;
            p += 4 + (int)size;
        }

        if (p > body.Length - 8) return false;
        var abi = BinaryPrimitives.ReadUInt64LittleEndian(body[p..]);
        p += 8;
        if (abi != 0)
        {
            if (p > body.Length - _userRegisters * 8) return false;
            registers = body.Slice(p, _userRegisters * 8);
            p += _userRegisters * 8;
        }

        if (p > body.Length - 8) return false;
        var copied = BinaryPrimitives.ReadUInt64LittleEndian(body[p..]);
        p += 8;
        if (copied == 0 || abi == 0) return false;
        if (copied > (ulong)(body.Length - p - 8)) return false;
        // dyn_size 0 (a thread not yet in user space, e.g. at ret_from_fork): no user stack, as perf takes it.
        var used = BinaryPrimitives.ReadUInt64LittleEndian(body[(p + (int)copied)..]);
        if (used == 0) return false;
        stack = body.Slice(p, (int)Math.Min(copied, used));
        return true;
    }

    private bool SkipRead(ReadOnlySpan<byte> body, ref int p)
    {
        if (!Has(PerfSampleType.Read)) return true;
        var perValue = 8 + (HasRead(PerfReadFormat.Id) ? 8 : 0) + (HasRead(PerfReadFormat.Lost) ? 8 : 0);
        var times =
            (HasRead(PerfReadFormat.TotalTimeEnabled) ? 8 : 0) + (HasRead(PerfReadFormat.TotalTimeRunning) ? 8 : 0);
        if (HasRead(PerfReadFormat.Group))
        {
            if (p > body.Length - 8) return false;
            var nr = BinaryPrimitives.ReadUInt64LittleEndian(body[p..]);
            if (nr > (ulong)body.Length / (ulong)perValue) return false;
            p += 8 + times + (int)nr * perValue;
        }
        else
        {
            p += times + perValue;
        }

        return p <= body.Length;
    }

    private bool SkipVariable(ReadOnlySpan<byte> body, ref int p)
    {
        if (!SkipRead(body, ref p)) return false;

        if (Has(PerfSampleType.Callchain))
        {
            if (p > body.Length - 8) return false;
            var nr = BinaryPrimitives.ReadUInt64LittleEndian(body[p..]);
            if (nr > (ulong)body.Length / 8) return false;
            p += 8 + (int)nr * 8;
        }

        return p <= body.Length;
    }

    private bool Has(ulong bit) => (_sampleType & bit) != 0;

    private bool HasRead(ulong bit) => (_readFormat & bit) != 0;

    /// <summary>Offset of the sample id in a sample body (IDENTIFIER first, else ID), or -1.</summary>
    public static int IdOffset(ulong sampleType)
    {
        if ((sampleType & PerfSampleType.Identifier) != 0) return 0;
        if ((sampleType & PerfSampleType.Id) == 0) return -1;
        var bits = sampleType & (PerfSampleType.Ip | PerfSampleType.Tid | PerfSampleType.Time | PerfSampleType.Addr);
        return 8 * BitOperations.PopCount(bits);
    }
}

/// <summary>
/// The sample_id trailer that sample_id_all appends to non-sample records (pid/tid, time, id, stream id, cpu,
/// identifier, in that order, 8 bytes each): offsets counted back from the record's end.
/// </summary>
internal readonly struct SampleIdTrailer
{
    private readonly int _size;
    private readonly int _timeFromEnd;
    private readonly int _cpuFromEnd;
    private readonly int _tidFromEnd;
    private readonly int _idFromEnd;

    public SampleIdTrailer(ulong sampleType, bool sampleIdAll)
    {
        _timeFromEnd = _cpuFromEnd = _tidFromEnd = _idFromEnd = -1;
        if (!sampleIdAll) return;
        ReadOnlySpan<ulong> order = [PerfSampleType.Tid, PerfSampleType.Time, PerfSampleType.Id,
            PerfSampleType.StreamId, PerfSampleType.Cpu, PerfSampleType.Identifier];
        var offsets = new int[order.Length];
        var size = 0;
        for (var i = 0; i < order.Length; i++)
        {
            offsets[i] = -1;
            if ((sampleType & order[i]) == 0) continue;
            offsets[i] = size;
            size += 8;
        }

        _size = size;
        _timeFromEnd = offsets[1] < 0 ? -1 : size - offsets[1];
        _cpuFromEnd = offsets[4] < 0 ? -1 : size - offsets[4];
        // pid then tid, u32 each.
        _tidFromEnd = offsets[0] < 0 ? -1 : size - offsets[0] - 4;
        // IDENTIFIER when present (the same value as ID), else ID.
        _idFromEnd = offsets[5] >= 0 ? size - offsets[5] : offsets[2] >= 0 ? size - offsets[2] : -1;
    }

    public int Size => _size;

    /// <summary>The trailer places a record: it has the time, the CPU and the thread.</summary>
    public bool Places => _timeFromEnd > 0 && _cpuFromEnd > 0 && _tidFromEnd > 0;

    /// <summary>The thread (TID) in the trailer; -1 when absent.</summary>
    public int Tid(ReadOnlySpan<byte> body) =>
        _tidFromEnd < 0 || body.Length < _tidFromEnd
            ? -1
            : (int)BinaryPrimitives.ReadUInt32LittleEndian(body[^_tidFromEnd..]);

    public long Time(ReadOnlySpan<byte> body) =>
        _timeFromEnd < 0 || body.Length < _timeFromEnd ? -1
            : (long)BinaryPrimitives.ReadUInt64LittleEndian(body[^_timeFromEnd..]);

    /// <summary>The sample id (IDENTIFIER or ID) in the trailer; null when absent.</summary>
    public ulong? Id(ReadOnlySpan<byte> body) =>
        _idFromEnd < 0 || body.Length < _idFromEnd
            ? null
            : BinaryPrimitives.ReadUInt64LittleEndian(body[^_idFromEnd..]);

    public int Cpu(ReadOnlySpan<byte> body) =>
        _cpuFromEnd < 0 || body.Length < _cpuFromEnd ? -1
            : (int)BinaryPrimitives.ReadUInt32LittleEndian(body[^_cpuFromEnd..]);
}
