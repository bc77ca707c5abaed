using System.Runtime.CompilerServices;

namespace TraceLab.Analyzers;

/// <summary>
/// One analyzer's per-thread state, in an array indexed by <see cref="ThreadSlots"/> slot (a few loads instead of a
/// hashed lookup per event), created on first use. Also keeps the entries in first-seen order (what completion walks)
/// and by tid (what results are read by; that index is built at its first use and kept up to date from then on:
/// most tables are never read by tid, and an index entry is ~50 bytes per thread and table). Memory grows with the
/// threads seen, never with the events.
/// </summary>
/// <remarks>
/// A struct, held in a non-readonly field of its analyzer: the slot array is then a field of the analyzer itself,
/// one load fewer on every lookup than through a table object (measurable on the per-event path). Never copy it
/// and never make the field readonly: a copy's growth would be lost.
/// </remarks>
public struct SlotTable<T> where T : class
{
    private readonly Func<int, int, T> _create;
    private readonly List<(int Tid, T Value)> _order = [];
    /// <summary>The entries by tid once <see cref="ByTid"/> was first read (a box: that getter is readonly).</summary>
    private readonly StrongBox<Dictionary<int, T>?> _byTid = new();
    private T?[] _bySlot = [];

    /// <param name="create">Makes the entry of a thread (given its tid and slot) the first time it is needed.</param>
    public SlotTable(Func<int, int, T> create) => _create = create;

    /// <summary>Entries in the order they were created.</summary>
    public readonly IReadOnlyList<(int Tid, T Value)> InOrder => _order;

    /// <summary>Entries by tid, enumerated in the order they were created.</summary>
    public readonly IReadOnlyDictionary<int, T> ByTid => _byTid.Value ??= IndexByTid();

    private readonly Dictionary<int, T> IndexByTid()
    {
        var byTid = new Dictionary<int, T>(_order.Count);
        foreach (var (tid, value) in _order) byTid[tid] = value;
        return byTid;
    }

    /// <summary>
    /// The entry at <paramref name="slot"/>, or null when there is none. Reads only: taking a <c>ref</c> to an element
    /// of a reference-type array costs a covariance check per access; a store happens once per thread.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public readonly T? Find(int slot)
    {
        var items = _bySlot;
        return (uint)slot < (uint)items.Length ? items[slot] : null;
    }

    /// <summary>The entry of <paramref name="tid"/> at <paramref name="slot"/>, created on first use.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public T At(int slot, int tid) => Find(slot) ?? Add(slot, tid);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private T Add(int slot, int tid)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(slot);
        if (slot >= _bySlot.Length) Array.Resize(ref _bySlot, Math.Max(slot + 1, Math.Max(16, _bySlot.Length * 2)));
        var value = _create(tid, slot);
        _bySlot[slot] = value;
        _order.Add((tid, value));
        if (_byTid.Value is { } byTid) byTid[tid] = value;
        return value;
    }
}
