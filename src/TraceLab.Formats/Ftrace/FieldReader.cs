using System.Buffers.Binary;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace TraceLab.Formats.Ftrace;

/// <summary>
/// A resolved field position: reads a scalar of 1, 2, 4 or 8 bytes, sign-extending when the format says signed.
/// </summary>
internal readonly struct FieldReader(int offset, int size, bool signed)
{
    private readonly int _offset = offset;
    private readonly int _size = size;
    private readonly bool _signed = signed;

    public static FieldReader From(FtraceField? f) =>
        f is null ? default : new FieldReader(f.Offset, Math.Min(f.Size, 8), f.IsSigned);

    public static FieldReader FromArrayElement(FtraceField f, int index, int elementSize) =>
        new(f.Offset + (index * elementSize), elementSize, f.IsSigned);

    public bool IsPresent => _size > 0;

    /// <summary>The field is <paramref name="size"/> bytes at <paramref name="offset"/>, of that signedness.</summary>
    public bool Is(int offset, int size, bool signed) => _offset == offset && _size == size && _signed == signed;

    /// <summary>The field is <paramref name="size"/> bytes at <paramref name="offset"/>, either signedness.</summary>
    public bool Is(int offset, int size) => _offset == offset && _size == size;

    /// <summary>The first byte past this field; a record shorter than this is corrupt.</summary>
    public int End => _offset + _size;

    // Inlined into the decoder: called several times per event, and the call cost was most of its time.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public long Read(ReadOnlySpan<byte> p)
    {
        if ((uint)End > (uint)p.Length || _size == 0) return 0;
        // BitConverter.IsLittleEndian is a JIT-time constant: big-endian hosts take the byte-order-aware path.
        if (!BitConverter.IsLittleEndian) return ReadPortable(p.Slice(_offset, _size));
        ref var at = ref Unsafe.Add(ref MemoryMarshal.GetReference(p), _offset);
        return _size switch
        {
            8 => Unsafe.ReadUnaligned<long>(ref at),
            4 => _signed ? Unsafe.ReadUnaligned<int>(ref at) : Unsafe.ReadUnaligned<uint>(ref at),
            2 => _signed ? Unsafe.ReadUnaligned<short>(ref at) : Unsafe.ReadUnaligned<ushort>(ref at),
            1 => _signed ? (sbyte)at : at,
            _ => 0,
        };
    }

    private long ReadPortable(ReadOnlySpan<byte> s) => _size switch
    {
        8 => BinaryPrimitives.ReadInt64LittleEndian(s),
        4 => _signed ? BinaryPrimitives.ReadInt32LittleEndian(s) : BinaryPrimitives.ReadUInt32LittleEndian(s),
        2 => _signed ? BinaryPrimitives.ReadInt16LittleEndian(s) : BinaryPrimitives.ReadUInt16LittleEndian(s),
        1 => _signed ? (sbyte)s[0] : s[0],
        _ => 0,
    };

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public int ReadInt32(ReadOnlySpan<byte> p) => (int)Read(p);

    /// <summary>
    /// <see cref="Read"/> without the bounds check, for a caller that has checked the record reaches <see cref="End"/>
    /// (the decoder checks each event type's minimum length once). A chain of compares instead of a jump table: each
    /// call site sees one size, so the branches predict perfectly.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public long ReadKnown(ref byte record)
    {
        if (!BitConverter.IsLittleEndian)
            return ReadPortable(MemoryMarshal.CreateReadOnlySpan(ref Unsafe.Add(ref record, _offset), _size));
        ref var at = ref Unsafe.Add(ref record, _offset);
        if (_size == 8) return Unsafe.ReadUnaligned<long>(ref at);
        if (_size == 4) return _signed ? Unsafe.ReadUnaligned<int>(ref at) : Unsafe.ReadUnaligned<uint>(ref at);
        if (_size == 2) return _signed ? Unsafe.ReadUnaligned<short>(ref at) : Unsafe.ReadUnaligned<ushort>(ref at);
        if (_size == 1) return _signed ? (sbyte)at : at;
        return 0;
    }

    /// <summary>
    /// <c>(int)ReadKnown(record)</c>: for 4- and 8-byte fields that is the low 32 bits whatever the signedness, one
    /// load on little-endian hosts.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public int ReadInt32Known(ref byte record)
    {
        if (BitConverter.IsLittleEndian && (_size == 4 || _size == 8))
            return Unsafe.ReadUnaligned<int>(ref Unsafe.Add(ref record, _offset));
        return (int)ReadKnown(ref record);
    }

    /// <summary>The bytes of a fixed char array (e.g. comm), empty when out of range.</summary>
    public ReadOnlySpan<byte> Bytes(ReadOnlySpan<byte> p, int length) =>
        (uint)(_offset + length) <= (uint)p.Length && _size > 0 ? p.Slice(_offset, length) : default;
}
