using System.Runtime.CompilerServices;

namespace TraceLab.Analyzers;

/// <summary>
/// Per CPU, the last thread an analyzer looked up there and its state. A thread's own events (syscall entry and exit,
/// two thirds of a lock-heavy trace) come from the CPU it runs on, mostly the same thread again until the next switch,
/// so one compare replaces the slot lookup (<see cref="ThreadSlots.SlotOf"/> then the per-slot table: six dependent
/// loads). Entries are never invalid, only replaced: an analyzer's per-thread state object is created once and kept
/// for the whole pass, so a cached tid → state pair stays true. A mutable struct: keep it in a non-readonly field.
/// </summary>
internal struct CpuThreadCache<T> where T : class
{
    private Entry[]? _entries;

    private struct Entry
    {
        public int Tid;
        public T? Value;
    }

    /// <summary>The state cached for <paramref name="tid"/> on <paramref name="cpu"/>, or null (then look it up and <see cref="Set"/> it).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public readonly T? Get(int cpu, int tid)
    {
        var a = _entries;
        if (a is not null && (uint)cpu < (uint)a.Length)
        {
            ref readonly var entry = ref a[cpu];
            if (entry.Tid == tid) return entry.Value;
        }
        return null;
    }

    public void Set(int cpu, int tid, T value)
    {
        if (cpu < 0) return;
        if (_entries is null || cpu >= _entries.Length) Array.Resize(ref _entries, Math.Max(cpu + 1, 4));
        ref var entry = ref _entries[cpu];
        entry.Tid = tid;
        entry.Value = value;
    }
}
