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
    /// bits are constants so that, inlined, each field's test compiles to one compare with an immediate.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void Visit<TVisitor>(ref KernelEvent e, ref TVisitor v) where TVisitor : struct, IFieldVisitor
    {
        v.Int(ref e.Cpu, 1 << 0);
        v.Int(ref e.CurrentTid, 1 << 1);
        v.Int(ref e.Tid, 1 << 2);
        v.Int(ref e.Tid2, 1 << 3);
        v.Int(ref e.Prio, 1 << 4);
        v.Int(ref e.Prio2, 1 << 5);
        v.Long(ref e.State, 1 << 6);
        v.Int(ref e.Cpu2, 1 << 7);
        v.Int(ref e.Cpu3, 1 << 8);
        v.Int(ref e.SyscallNr, 1 << 9);
        v.Long(ref e.Arg0, 1 << 10);
        v.Long(ref e.Arg1, 1 << 11);
        v.Long(ref e.Arg2, 1 << 12);
        v.Long(ref e.Arg3, 1 << 13);
        v.Long(ref e.Ret, 1 << 14);
        v.UShort(ref e.WaitReasonPlusOne, 1 << 15);
        v.Int(ref e.Stack, 1 << 16);
    }

    /// <summary>
    /// Packs <paramref name="e"/> at <paramref name="bytes"/>[<paramref name="offset"/>..], which must have room for
    /// <see cref="MaxBytes"/>. A text goes to <paramref name="texts"/>[<paramref name="textCount"/>++]. Returns the
    /// bytes the event took.
    /// </summary>
    public static unsafe int Pack(in KernelEvent e, byte[] bytes, int offset, string?[] texts, ref int textCount)
    {
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

    /// <summary>Unpacks the event at <paramref name="offset"/> into <paramref name="e"/>; returns its length.</summary>
    public static unsafe int Unpack(byte[] bytes, int offset, string?[] texts, ref KernelEvent e)
    {
        fixed (byte* start = &MemoryMarshal.GetArrayDataReference(bytes))
        {
            var at = start + offset;
            e = default;
            e.Timestamp = Unsafe.ReadUnaligned<long>(at);
            e.Kind = (KernelEventKind)at[8];
            e.Flags = at[9];
            var mask = Unsafe.ReadUnaligned<ushort>(at + 10) | (at[12] << 16);
            var unpacker = new Unpacker(at, mask);
            Visit(ref e, ref unpacker);
            var p = unpacker.Position;
            if ((mask & TextBit) != 0)
            {
                e.Text = texts[Unsafe.ReadUnaligned<int>(at + p)];
                p += 4;
            }

            return p;
        }
    }

    private interface IFieldVisitor
    {
        void Int(ref int field, int bit);
        void Long(ref long field, int bit);
        void UShort(ref ushort field, int bit);
    }

    /// <summary>Writes the non-zero fields after the header and sets their mask bits, in visiting order.</summary>
    private unsafe struct Packer(byte* start) : IFieldVisitor
    {
        public int Position = HeaderBytes;
        public int Mask;

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void Int(ref int field, int bit)
        {
            if (field != 0)
            {
                Unsafe.WriteUnaligned(start + Position, field);
                Position += 4;
                Mask |= bit;
            }
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void Long(ref long field, int bit)
        {
            if (field != 0)
            {
                Unsafe.WriteUnaligned(start + Position, field);
                Position += 8;
                Mask |= bit;
            }
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void UShort(ref ushort field, int bit)
        {
            if (field != 0)
            {
                Unsafe.WriteUnaligned(start + Position, field);
                Position += 2;
                Mask |= bit;
            }
        }
    }

    /// <summary>Reads the fields whose mask bits are set, in visiting order; the others stay zero.</summary>
    private unsafe struct Unpacker(byte* start, int mask) : IFieldVisitor
    {
        public int Position = HeaderBytes;

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void Int(ref int field, int bit)
        {
            if ((mask & bit) == 0) return;
            field = Unsafe.ReadUnaligned<int>(start + Position);
            Position += 4;
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void Long(ref long field, int bit)
        {
            if ((mask & bit) == 0) return;
            field = Unsafe.ReadUnaligned<long>(start + Position);
            Position += 8;
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public void UShort(ref ushort field, int bit)
        {
            if ((mask & bit) == 0) return;
            field = Unsafe.ReadUnaligned<ushort>(start + Position);
            Position += 2;
        }
    }
}
