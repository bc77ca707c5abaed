namespace TraceLab.Analyzers.WaitGraph;

/// <summary>The <see cref="ThreadWaitState"/> of every thread that ever blocked, by <see cref="ThreadSlots"/> slot.</summary>
internal sealed class WaitStateTable
{
    private readonly ThreadSlots _slots;
    private readonly int _historyCapacity;
    private ThreadWaitState?[] _bySlot = [];

    public WaitStateTable(ThreadSlots slots, int historyCapacity)
    {
        _slots = slots;
        _historyCapacity = historyCapacity;
    }

    /// <summary>Every state in the order its thread first blocked (completion walks them in this order).</summary>
    public List<(int Tid, ThreadWaitState State)> InOrder { get; } = [];

    /// <summary>The thread's state, or null if it never blocked (nothing created).</summary>
    public ThreadWaitState? Find(int tid) => ThreadSlots.Find(_bySlot, _slots.SlotOf(tid));

    /// <summary>The state of the thread in <paramref name="slot"/>, or null if it never blocked.</summary>
    public ThreadWaitState? AtSlot(int slot) => ThreadSlots.Find(_bySlot, slot);

    /// <summary>The slot of a wait-for vertex: its <see cref="ThreadSlots"/> slot for a thread, -1 for a pseudo-vertex.</summary>
    public int SlotOfVertex(int vertex) => WaitVertex.IsThread(vertex) ? _slots.SlotOf(vertex) : -1;

    public ThreadWaitState GetOrAdd(int tid)
    {
        var slot = _slots.SlotOf(tid);
        if (ThreadSlots.Find(_bySlot, slot) is { } s) return s;
        s = ThreadSlots.Store(ref _bySlot, slot, new ThreadWaitState(_historyCapacity));
        InOrder.Add((tid, s));
        return s;
    }
}
