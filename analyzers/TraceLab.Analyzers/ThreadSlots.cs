using System.Runtime.CompilerServices;

namespace TraceLab.Analyzers;

/// <summary>
/// Gives every tid a dense slot (0, 1, 2, … in order of first sight) once, so per-thread state can live in arrays
/// indexed by slot (<see cref="SlotTable{T}"/>) instead of a <see cref="Dictionary{TKey, TValue}"/> per analyzer:
/// one shared lookup of a few array loads replaces several hashed lookups per event. Non-negative tids map through
/// pages of <see cref="PageSize"/> entries allocated on first use (memory grows with the tid range actually seen, a few KiB
/// per thousand tids); negative ids (never real threads) through a dictionary.
/// </summary>
public sealed class ThreadSlots
{
    private const int PageBits = 10;
    private const int PageSize = 1 << PageBits;
    private const int PageMask = PageSize - 1;

    /// <summary>Slot + 1 per tid (0: none yet), one page per <see cref="PageSize"/> tids.</summary>
    private int[]?[] _pages = new int[]?[64];
    private readonly Dictionary<int, int> _negative = new();
    private int[] _tids = new int[64];

    /// <summary>Slots handed out so far; valid slots are 0 … Count − 1.</summary>
    public int Count { get; private set; }

    /// <summary>The slot of <paramref name="tid"/>, assigned now if it has none.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public int SlotOf(int tid)
    {
        var p = tid >> PageBits;
        var pages = _pages;
        if ((uint)p < (uint)pages.Length && pages[p] is { } page)
        {
            var s = page[tid & PageMask];
            if (s != 0) return s - 1;
        }
        return Assign(tid);
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
        var p = tid >> PageBits;
        if (p >= _pages.Length) Array.Resize(ref _pages, Math.Max(p + 1, _pages.Length * 2));
        var page = _pages[p] ??= new int[PageSize];
        var slot = NewSlot(tid);
        page[tid & PageMask] = slot + 1;
        return slot;
    }

    private int NewSlot(int tid)
    {
        if (Count == _tids.Length) Array.Resize(ref _tids, Count * 2);
        _tids[Count] = tid;
        return Count++;
    }
}
