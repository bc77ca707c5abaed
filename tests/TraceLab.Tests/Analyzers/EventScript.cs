using TraceLab.Analyzers;
using TraceLab.Core;

namespace TraceLab.Tests.Analyzers;

/// <summary>Feeds a hand-built event sequence to a fresh <see cref="ThreadAccounting"/> and completes it.</summary>
internal static class EventScript
{
    public static ThreadAccounting Run(params KernelEvent[] events)
    {
        var accounting = new ThreadAccounting();
        long last = long.MinValue;
        foreach (var e in events)
        {
            if (e.Timestamp < last) throw new InvalidOperationException($"test script out of order at {e}");
            last = e.Timestamp;
            accounting.OnEvent(e);
        }
        accounting.Complete();
        return accounting;
    }

    /// <summary>
    /// Any event logged on <paramref name="cpu"/> while <paramref name="pid"/> runs there (e.g. a syscall).
    /// </summary>
    public static KernelEvent SyscallBy(long ts, int cpu, int pid) => new()
    {
        Timestamp = ts,
        Cpu = cpu,
        CurrentTid = pid,
        Kind = KernelEventKind.SyscallEnter,
        SyscallNr = 202,
    };

    public static KernelEvent WithFlags(this KernelEvent e, byte flags)
    {
        e.Flags = flags;
        return e;
    }
}
