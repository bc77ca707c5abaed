using System.Runtime.CompilerServices;
using TraceLab.Core;

namespace TraceLab.Analyzers.Parallel;

/// <summary>
/// A batch of events packed for the hand-off between threads: each event as its timestamp, kind, flags and a mask
/// of which other fields are non-zero, followed by those fields only. A <see cref="KernelEvent"/> is 120 bytes, most
/// of them zero for any one kind; packed, a trace's events average ~30–45 bytes, and every byte the reader writes
/// here is a byte the analysis thread's core must fetch from the reader's core. Lossless: unpacking gives the event
/// that was packed, field for field (zero fields are zero either way; <see cref="KernelEvent.Text"/> is kept by
/// reference beside the bytes).
/// </summary>
internal sealed class PackedEvents
{
    /// <summary>Header (timestamp 8, kind 1, flags 1, mask 2) plus every field: 9 ints, 6 longs and a text index.</summary>
    public const int MaxPackedBytes = 12 + 9 * 4 + 6 * 8 + 4;

    /// <summary>Bytes past the last event that <see cref="Add"/> may store (and overwrite with the next event).</summary>
    private const int ReadSlack = 8;

    /// <summary>Mask bit of the text; fields take bits 0–14 in packing order (Cpu … Ret).</summary>
    private const int TextBit = 1 << 15;

    private readonly byte[] _bytes;
    private readonly string?[] _texts;
    private int _length;
    private int _textCount;

    public PackedEvents(int capacity)
    {
        Capacity = capacity;
        _bytes = new byte[capacity * MaxPackedBytes + ReadSlack];
        _texts = new string?[capacity];
    }

    /// <summary>Events the batch can hold, whatever their size.</summary>
    public int Capacity { get; }

    public int Count { get; private set; }

    /// <summary>Bytes packed so far.</summary>
    public int Length => _length;

    public bool IsFull => Count == Capacity;

    public void Clear()
    {
        // Texts are dropped so the batch does not keep strings alive while it waits in the pool.
        Array.Clear(_texts, 0, _textCount);
        Count = _length = _textCount = 0;
    }

    public void Add(in KernelEvent e)
    {
        ref var start = ref _bytes[_length];
        Unsafe.WriteUnaligned(ref start, e.Timestamp);
        Unsafe.Add(ref start, 8) = (byte)e.Kind;
        Unsafe.Add(ref start, 9) = e.Flags;
        var p = 12;
        var mask = 0;
        Int(ref start, ref p, ref mask, e.Cpu, 0);
        Int(ref start, ref p, ref mask, e.Pid, 1);
        Int(ref start, ref p, ref mask, e.Tid, 2);
        Int(ref start, ref p, ref mask, e.Tid2, 3);
        Int(ref start, ref p, ref mask, e.Prio, 4);
        Int(ref start, ref p, ref mask, e.Prio2, 5);
        Long(ref start, ref p, ref mask, e.State, 6);
        Int(ref start, ref p, ref mask, e.Cpu2, 7);
        Int(ref start, ref p, ref mask, e.Cpu3, 8);
        Int(ref start, ref p, ref mask, e.SyscallNr, 9);
        Long(ref start, ref p, ref mask, e.Arg0, 10);
        Long(ref start, ref p, ref mask, e.Arg1, 11);
        Long(ref start, ref p, ref mask, e.Arg2, 12);
        Long(ref start, ref p, ref mask, e.Arg3, 13);
        Long(ref start, ref p, ref mask, e.Ret, 14);
        if (e.Text is { } text)
        {
            _texts[_textCount] = text;
            Unsafe.WriteUnaligned(ref Unsafe.Add(ref start, p), _textCount++);
            p += 4;
            mask |= TextBit;
        }

        Unsafe.WriteUnaligned(ref Unsafe.Add(ref start, 10), (ushort)mask);
        _length += p;
        Count++;
    }

    /// <summary>Unpacks the event at byte <paramref name="offset"/> into <paramref name="e"/>; returns the next event's offset.</summary>
    public int Read(int offset, ref KernelEvent e)
    {
        ref var start = ref _bytes[offset];
        e = default;
        e.Timestamp = Unsafe.ReadUnaligned<long>(ref start);
        e.Kind = (KernelEventKind)Unsafe.Add(ref start, 8);
        e.Flags = Unsafe.Add(ref start, 9);
        int mask = Unsafe.ReadUnaligned<ushort>(ref Unsafe.Add(ref start, 10));
        var p = 12;
        if ((mask & (1 << 0)) != 0) e.Cpu = NextInt(ref start, ref p);
        if ((mask & (1 << 1)) != 0) e.Pid = NextInt(ref start, ref p);
        if ((mask & (1 << 2)) != 0) e.Tid = NextInt(ref start, ref p);
        if ((mask & (1 << 3)) != 0) e.Tid2 = NextInt(ref start, ref p);
        if ((mask & (1 << 4)) != 0) e.Prio = NextInt(ref start, ref p);
        if ((mask & (1 << 5)) != 0) e.Prio2 = NextInt(ref start, ref p);
        if ((mask & (1 << 6)) != 0) e.State = NextLong(ref start, ref p);
        if ((mask & (1 << 7)) != 0) e.Cpu2 = NextInt(ref start, ref p);
        if ((mask & (1 << 8)) != 0) e.Cpu3 = NextInt(ref start, ref p);
        if ((mask & (1 << 9)) != 0) e.SyscallNr = NextInt(ref start, ref p);
        if ((mask & (1 << 10)) != 0) e.Arg0 = NextLong(ref start, ref p);
        if ((mask & (1 << 11)) != 0) e.Arg1 = NextLong(ref start, ref p);
        if ((mask & (1 << 12)) != 0) e.Arg2 = NextLong(ref start, ref p);
        if ((mask & (1 << 13)) != 0) e.Arg3 = NextLong(ref start, ref p);
        if ((mask & (1 << 14)) != 0) e.Ret = NextLong(ref start, ref p);
        if ((mask & TextBit) != 0) e.Text = _texts[NextInt(ref start, ref p)];
        return offset + p;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int NextInt(ref byte start, ref int p)
    {
        var v = Unsafe.ReadUnaligned<int>(ref Unsafe.Add(ref start, p));
        p += 4;
        return v;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static long NextLong(ref byte start, ref int p)
    {
        var v = Unsafe.ReadUnaligned<long>(ref Unsafe.Add(ref start, p));
        p += 8;
        return v;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void Int(ref byte start, ref int p, ref int mask, int value, int bit)
    {
        if (value == 0) return;
        Unsafe.WriteUnaligned(ref Unsafe.Add(ref start, p), value);
        p += 4;
        mask |= 1 << bit;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void Long(ref byte start, ref int p, ref int mask, long value, int bit)
    {
        if (value == 0) return;
        Unsafe.WriteUnaligned(ref Unsafe.Add(ref start, p), value);
        p += 8;
        mask |= 1 << bit;
    }
}
