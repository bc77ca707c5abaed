using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace TraceLab.Core;

/// <summary>
/// A <see cref="KernelEvent"/> packed into bytes for the hand-off between threads: timestamp, kind, flags and a mask
/// of which storage fields are non-zero, followed by those fields only (most are zero for any one kind). Lossless:
/// unpacking gives the event that was packed, field for field; the text is kept by reference in a side array. The
/// storage fields are listed once, in <see cref="Visit"/>; packing, unpacking and the size bound all follow it.
/// </summary>
public static class KernelEventPacking
{
    private const int IntFields = 10;
    private const int LongFields = 6;
    private const int UShortFields = 1;
    /// <summary>Timestamp 8, kind 1, flags 1, then the 3-byte field mask.</summary>
    private const int HeaderBytes = 13;
    /// <summary>Mask bit of the text; fields take the bits below it, in <see cref="Visit"/>'s order.</summary>
    private const int TextBit = 1 << (IntFields + LongFields + UShortFields);

    /// <summary>The most bytes one event packs into (every field non-zero, with a text index).</summary>
    public const int MaxBytes = HeaderBytes + IntFields * 4 + LongFields * 8 + UShortFields * 2 + 4;

    /// <summary>
    /// Every storage field of the event with its mask bit, in packing order: the one list the packed layout comes
    /// from. The header fields that every event has (timestamp, kind, flags) and the text are packed around it. The
    /// bits are constants so that, inlined, each field's step compiles to a few shifts and adds with immediates.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void Visit<TVisitor>(ref KernelEvent e, ref TVisitor v) where TVisitor : struct, IFieldVisitor
    {
        v.Int(ref e.Cpu, 0);
        v.Int(ref e.CurrentTid, 1);
        v.Int(ref e.Tid, 2);
        v.Int(ref e.Tid2, 3);
        v.Int(ref e.Prio, 4);
        v.Int(ref e.Prio2, 5);
        v.Long(ref e.State, 6);
        v.Int(ref e.Cpu2, 7);
        v.Int(ref e.Cpu3, 8);
        v.Int(ref e.SyscallNr, 9);
        v.Long(ref e.Arg0, 10);
        v.Long(ref e.Arg1, 11);
        v.Long(ref e.Arg2, 12);
        v.Long(ref e.Arg3, 13);
        v.Long(ref e.Ret, 14);
        v.UShort(ref e.WaitReasonPlusOne, 15);
        v.Int(ref e.Stack, 16);
    }

    /// <summary>
    /// Packs <paramref name="e"/> at <paramref name="bytes"/>[<paramref name="offset"/>..], which must have room for
    /// <see cref="MaxBytes"/> (the bytes past the event's own may be written too). A text goes to
    /// <paramref name="texts"/>[<paramref name="textCount"/>++]. Returns the bytes the event took.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">Fewer than <see cref="MaxBytes"/> bytes from
    /// <paramref name="offset"/>.</exception>
    public static unsafe int Pack(in KernelEvent e, byte[] bytes, int offset, string?[] texts, ref int textCount)
    {
        CheckRoom(bytes, offset);
        // Pinned for the call: the visitor keeps a pointer, which must not move with the array.
        fixed (byte* start = &MemoryMarshal.GetArrayDataReference(bytes))
        {
            var at = start + offset;
            Unsafe.WriteUnaligned(at, e.Timestamp);
            at[8] = (byte)e.Kind;
            at[9] = e.Flags;
            var packer = new Packer(at);
            Visit(ref Unsafe.AsRef(in e), ref packer);
            var mask = packer.Mask;
            var p = packer.Position;
            if (e.Text is { } text)
            {
                texts[textCount] = text;
                Unsafe.WriteUnaligned(at + p, textCount++);
                p += 4;
                mask |= TextBit;
            }

            // Three mask bytes, so the text bit fits above the 17 field bits.
            Unsafe.WriteUnaligned(at + 10, (ushort)mask);
            at[12] = (byte)(mask >> 16);
            return p;
        }
    }

    /// <summary>
    /// Unpacks the event at <paramref name="offset"/> into <paramref name="e"/>; returns its length. The
    /// <see cref="MaxBytes"/> bytes from <paramref name="offset"/> must be in <paramref name="bytes"/> (as they were
    /// when it was packed there): each absent field is read too, and dropped.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">Fewer than <see cref="MaxBytes"/> bytes from
    /// <paramref name="offset"/>.</exception>
    public static unsafe int Unpack(byte[] bytes, int offset, string?[] texts, ref KernelEvent e)
    {
        CheckRoom(bytes, offset);
        fixed (byte* start = &MemoryMarshal.GetArrayDataReference(bytes))
        {
            var at = start + offset;
            // Every field is assigned below (the absent ones zero), so no clearing first.
            e.Timestamp = Unsafe.ReadUnaligned<long>(at);
            e.Kind = (KernelEventKind)at[8];
            e.Flags = at[9];
            var mask = Unsafe.ReadUnaligned<ushort>(at + 10) | (at[12] << 16);
            var unpacker = new Unpacker(at, mask);
            Visit(ref e, ref unpacker);
            var p = unpacker.Position;
            e.Text = null;
            if ((mask & TextBit) != 0)
            {
                e.Text = texts[Unsafe.ReadUnaligned<int>(at + p)];
                p += 4;
            }

            return p;
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void CheckRoom(byte[] bytes, int offset)
    {
        if ((uint)offset > (uint)(bytes.Length - MaxBytes)) NoRoom(bytes, offset);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void NoRoom(byte[] bytes, int offset) =>
        throw new ArgumentOutOfRangeException(nameof(offset), offset,
            $"{MaxBytes} bytes from the offset must be in the {bytes.Length}-byte array");

    private interface IFieldVisitor
    {
        // bit: the field's bit number in the mask.
        void Int(ref int field, int bit);
        void Long(ref long field, int bit);
        void UShort(ref ushort field, int bit);
    }

    /// <summary>
    /// Writes the non-zero fields after the header and sets their mask bits, in visiting order. Without branches:
    /// which fields an event has depends on its kind, and kinds alternate too irregularly for the branch predictor
    /// (a mispredicted field cost more than the field). Each field is written where the next goes, then kept (the
    /// position moves past it and its bit is set) only when it is not zero; the next field overwrites a zero one.
    /// </summary>
    private unsafe struct Packer(byte* start) : IFieldVisitor
    {
        public int Position = HeaderBytes;
        public int Mask;

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void Int(ref int field, int bit)
        {
            var value = field;
            Unsafe.WriteUnaligned(start + Position, value);
            // 1 when non-zero: the sign bit of value | -value (int.MinValue included).
            var kept = (int)((uint)(value | -value) >> 31);
            Position += kept << 2;
            Mask |= kept << bit;
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void Long(ref long field, int bit)
        {
            var value = field;
            Unsafe.WriteUnaligned(start + Position, value);
            var kept = (int)((ulong)(value | -value) >> 63);
            Position += kept << 3;
            Mask |= kept << bit;
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void UShort(ref ushort field, int bit)
        {
            int value = field;
            Unsafe.WriteUnaligned(start + Position, (ushort)value);
            var kept = (int)((uint)-value >> 31);
            Position += kept << 1;
            Mask |= kept << bit;
        }
    }

    /// <summary>
    /// Reads every field in visiting order, without branches (as <see cref="Packer"/>): a field whose mask bit is
    /// clear reads the bytes where it would be, then is masked to zero, and the position does not move.
    /// </summary>
    private unsafe struct Unpacker(byte* start, int mask) : IFieldVisitor
    {
        public int Position = HeaderBytes;

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void Int(ref int field, int bit)
        {
            var present = (mask >> bit) & 1;
            field = Unsafe.ReadUnaligned<int>(start + Position) & -present;
            Position += present << 2;
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void Long(ref long field, int bit)
        {
            var present = (mask >> bit) & 1;
            field = Unsafe.ReadUnaligned<long>(start + Position) & -(long)present;
            Position += present << 3;
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void UShort(ref ushort field, int bit)
        {
            var present = (mask >> bit) & 1;
            field = (ushort)(Unsafe.ReadUnaligned<ushort>(start + Position) & -present);
            Position += present << 1;
        }
    }
}
