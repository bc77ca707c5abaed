using System.Runtime.CompilerServices;

namespace TraceLab.Analyzers;

/// <summary>
/// Per CPU, which thread the switch chain says runs there (<see cref="AccountedCpu"/>): the accounting's CPU table,
/// grown as CPUs appear. A struct held in a field of the accounting, so the hot path reads <see cref="Items"/> without
/// one more indirection.
/// </summary>
internal struct CpuTable
{
    /// <summary>Indexed by CPU number; entries past the end are CPUs no event has named yet.</summary>
    public AccountedCpu[] Items;

    public CpuTable() => Items = [];

    /// <summary>The CPU's entry, growing the table (new entries know nothing) when the CPU is new.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public ref AccountedCpu At(int cpu)
    {
        var cpus = Items;
        if ((uint)cpu < (uint)cpus.Length) return ref cpus[cpu];
        return ref Grow(cpu);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private ref AccountedCpu Grow(int cpu)
    {
        if (cpu >= Items.Length)
        {
            var old = Items.Length;
            Array.Resize(ref Items, Math.Max(cpu + 1, old * 2));
            for (var i = old; i < Items.Length; i++)
                Items[i] = new AccountedCpu
                {
                    Current = ThreadAccounting.UnknownTask,
                    CurrentSlot = -1,
                    LastEvidence = long.MinValue,
                };
        }
        return ref Items[cpu];
    }

    /// <summary>
    /// When <paramref name="cpu"/> is known to run <paramref name="tid"/> (with <paramref name="vouched"/>, a thread
    /// whose tid has stood for it since its switch-in: <see cref="AccountedCpu.TidStands"/>), an event of that thread
    /// at <paramref name="t"/> moves its last-seen time and nothing else: true, with its slot. Otherwise false, and
    /// nothing changed.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public readonly bool TryStillRunning(int cpu, int tid, long t, bool vouched, out int slot)
    {
        var cpus = Items;
        if ((uint)cpu < (uint)cpus.Length)
        {
            ref var known = ref cpus[cpu];
            if (known.Current == tid && (vouched ? known.TidStands : tid != ThreadAccounting.UnknownTask))
            {
                known.LastEvidence = t;
                slot = known.CurrentSlot;
                return true;
            }
        }
        slot = -1;
        return false;
    }

    /// <summary>Some thread, or idle, is known to run on <paramref name="cpu"/>.</summary>
    public readonly bool Knows(int cpu) =>
        (uint)cpu < (uint)Items.Length && Items[cpu].Current != ThreadAccounting.UnknownTask;

    /// <summary>
    /// A tid now stands for another thread than before: no CPU's current thread is vouched for by its tid any more,
    /// until its next switch-in (<see cref="AccountedCpu.TidStands"/>).
    /// </summary>
    public readonly void ForgetTids()
    {
        for (var i = 0; i < Items.Length; i++) Items[i].TidStands = false;
    }

    /// <summary>
    /// The CPUs below <paramref name="cpuCount"/> that logged no event at all (offline, or idle throughout with no
    /// switch logged).
    /// </summary>
    public readonly List<int> Silent(int cpuCount)
    {
        var silent = new List<int>();
        for (var c = 0; c < cpuCount; c++)
            if (c >= Items.Length || Items[c].LastEvidence == long.MinValue) silent.Add(c);
        return silent;
    }
}
