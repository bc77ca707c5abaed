namespace TraceLab.Analyzers.WaitGraph;

/// <summary>
/// The <see cref="ThreadWaitState"/> of every thread that ever blocked, by <see cref="ThreadSlots"/> slot.
/// </summary>
internal sealed class WaitStateTable
{
    private readonly ThreadSlots _slots;
    private SlotTable<ThreadWaitState> _states;

    public WaitStateTable(ThreadSlots slots, int historyCapacity)
    {
        _slots = slots;
        _states = new SlotTable<ThreadWaitState>((_, _) => new ThreadWaitState(historyCapacity));
    }

    /// <summary>Every state in the order its thread first blocked (completion walks them in this order).</summary>
    public IReadOnlyList<(int Tid, ThreadWaitState State)> InOrder => _states.InOrder;

    /// <summary>The thread's state, or null if it never blocked (nothing created).</summary>
    public ThreadWaitState? Find(int tid) => _states.Find(_slots.SlotOf(tid));

    /// <summary>The state of the thread in <paramref name="slot"/>, or null if it never blocked.</summary>
    public ThreadWaitState? AtSlot(int slot) => _states.Find(slot);

    /// <summary>
    /// The slot of a wait-for vertex: its <see cref="ThreadSlots"/> slot for a thread, -1 for a pseudo-vertex.
    /// </summary>
    public int SlotOfVertex(int vertex) => WaitVertex.IsThread(vertex) ? _slots.SlotOf(vertex) : -1;

    public ThreadWaitState GetOrAdd(int tid) => _states.At(_slots.SlotOf(tid), tid);
}
