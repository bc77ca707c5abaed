using System.Buffers.Binary;

namespace TraceLab.Formats.Ftrace;

/// <summary>
/// ftrace's stack records (<c>options/stacktrace</c>, <c>options/userstacktrace</c>, the <c>stacktrace</c> trigger):
/// <c>ftrace/kernel_stack</c> (a count <c>size</c>, then that many return addresses) and <c>ftrace/user_stack</c>
/// (the process <c>tgid</c>, then eight slots, unused ones 0). The kernel writes them on the CPU of the event they
/// belong to, right after it; their positions come from the trace's own format files.
/// </summary>
public sealed class FtraceStackRecords
{
    /// <summary>
    /// Frames read from one kernel stack record at most (the format's nominal caller[8] is not a limit).
    /// </summary>
    public const int MaxKernelFrames = 128;

    private readonly int _kernelId = -1, _userId = -1;
    private readonly FieldReader _type, _size, _tgid;
    private readonly int _kernelCallerOffset = -1, _userCallerOffset = -1, _userSlots;

    private FtraceStackRecords(IReadOnlyList<FtraceEventFormat> formats)
    {
        foreach (var f in formats)
        {
            if (f.System != "ftrace") continue;
            if (f.Name == "kernel_stack" && f.Field("size") is { Size: 4 } size && f.Field("caller") is { } kc)
            {
                _kernelId = f.Id;
                _size = FieldReader.From(size);
                _kernelCallerOffset = kc.Offset;
            }
            else if (f.Name == "user_stack" && f.Field("tgid") is { Size: 4 } tgid
                     && f.Field("caller") is { ArrayLength: > 0 } uc && uc.Size == uc.ArrayLength * 8)
            {
                _userId = f.Id;
                _tgid = FieldReader.From(tgid);
                _userCallerOffset = uc.Offset;
                _userSlots = uc.ArrayLength;
            }
            if (f.Field("common_type") is { } type) _type = FieldReader.From(type);
        }
    }

    /// <summary>
    /// The trace's stack record formats; null when it has neither (or their layout is not the known one).
    /// </summary>
    public static FtraceStackRecords? Of(IReadOnlyList<FtraceEventFormat> formats)
    {
        var records = new FtraceStackRecords(formats);
        return records._kernelId < 0 && records._userId < 0 || !records._type.IsPresent ? null : records;
    }

    /// <summary>What the record is: a kernel stack, a user stack, or no stack record.</summary>
    public FtraceStackKind KindOf(ReadOnlySpan<byte> payload)
    {
        if (payload.Length < _type.End) return FtraceStackKind.None;
        var id = _type.Read(payload);
        return id == _kernelId ? FtraceStackKind.Kernel : id == _userId ? FtraceStackKind.User : FtraceStackKind.None;
    }

    /// <summary>
    /// Copies a kernel stack record's addresses, innermost first, into <paramref name="into"/>; returns how many. A
    /// count that runs past the record (damage) gives the addresses the record holds, and <paramref name="cut"/>.
    /// </summary>
    public int ReadKernel(ReadOnlySpan<byte> payload, Span<ulong> into, out bool cut)
    {
        cut = false;
        if (payload.Length < _kernelCallerOffset || payload.Length < _size.End) { cut = true; return 0; }
        var declared = _size.ReadInt32(payload);
        var held = (payload.Length - _kernelCallerOffset) / 8;
        var n = Math.Min(Math.Min(Math.Max(declared, 0), held), into.Length);
        if (declared < 0 || declared > held) cut = true;
        var n2 = 0;
        for (var i = 0; i < n; i++)
        {
            var a = BinaryPrimitives.ReadUInt64LittleEndian(payload[(_kernelCallerOffset + (8 * i))..]);
            // Older kernels end a short stack with ULONG_MAX instead of a smaller count.
            if (a == ulong.MaxValue || a == 0) break;
            into[n2++] = a;
        }
        return n2;
    }

    /// <summary>
    /// Copies a user stack record's addresses, innermost first (the user IP, then the frame-pointer walk; unused
    /// slots are 0), into <paramref name="into"/>; returns how many, and the process it names.
    /// </summary>
    public int ReadUser(ReadOnlySpan<byte> payload, Span<ulong> into, out int tgid, out bool cut)
    {
        tgid = 0;
        cut = payload.Length < _userCallerOffset + (8 * _userSlots);
        if (payload.Length < _tgid.End) return 0;
        tgid = _tgid.ReadInt32(payload);
        var slots = Math.Min(Math.Max(payload.Length - _userCallerOffset, 0) / 8, _userSlots);
        var n = 0;
        for (var i = 0; i < slots && n < into.Length; i++)
        {
            var a = BinaryPrimitives.ReadUInt64LittleEndian(payload[(_userCallerOffset + (8 * i))..]);
            if (a == 0 || a == ulong.MaxValue) break;
            into[n++] = a;
        }
        return n;
    }
}

/// <summary>The kind of an ftrace stack record.</summary>
public enum FtraceStackKind : byte
{
    None,
    Kernel,
    User,
}
