using System.Runtime.CompilerServices;
using TraceLab.Core;

namespace TraceLab.Analyzers;

/// <summary>
/// Gives every tid a dense slot (0, 1, 2, … in order of first sight) once, so per-thread state can live in arrays
/// indexed by slot (<see cref="SlotTable{T}"/>) instead of a <see cref="Dictionary{TKey, TValue}"/> per analyzer:
/// one shared lookup of a few array loads replaces several hashed lookups per event. Non-negative tids map through
/// <see cref="TidPages"/> (pages allocated on first use (memory grows with the tid range actually seen, a few KiB
/// per thousand tids)); negative ids (never real threads) through a dictionary.
/// </summary>
public sealed class ThreadSlots
{
    /// <summary>Slot + 1 per tid (0: none yet).</summary>
    private TidPages _slots;
    private readonly Dictionary<int, int> _negative = new();
    private int[] _tids = new int[64];

    /// <summary>Slots handed out so far; valid slots are 0 … Count − 1.</summary>
    public int Count { get; private set; }

    /// <summary>The slot of <paramref name="tid"/>, assigned now if it has none.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public int SlotOf(int tid)
    {
        var s = _slots.Get(tid);
        return s != 0 ? s - 1 : Assign(tid);
    }

    /// <summary>The slot of <paramref name="tid"/> when it is a thread (&gt; 0), else -1 (idle, no thread).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public int SlotOfThread(int tid) => tid > 0 ? SlotOf(tid) : -1;

    /// <summary>The tid that owns <paramref name="slot"/>.</summary>
    public int TidOf(int slot) => _tids[slot];

    [MethodImpl(MethodImplOptions.NoInlining)]
    private int Assign(int tid)
    {
        if (tid < 0)
        {
            if (!_negative.TryGetValue(tid, out var n)) _negative[tid] = n = NewSlot(tid);
            return n;
        }
        var slot = NewSlot(tid);
        _slots.At(tid) = slot + 1;
        return slot;
    }

    private int NewSlot(int tid)
    {
        if (Count == _tids.Length) Array.Resize(ref _tids, Count * 2);
        _tids[Count] = tid;
        return Count++;
    }
}
