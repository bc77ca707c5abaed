using System.Globalization;
using TraceLab.Core.Syscalls;

namespace TraceLab.Analyzers.Kernel;

/// <summary>Time one thread spent in one syscall over the measured region (docs/metrics.md#kernel-time).</summary>
public sealed class SyscallStats
{
    public SyscallStats(long key) => Key = key;

    /// <summary>
    /// Linux syscall number (≥ 0), or the ETW SysCallAddress (a kernel address) when the number is unknown.
    /// </summary>
    public long Key { get; }
    public string Name => Key is >= 0 and < int.MaxValue ? LinuxSyscalls.Name((int)Key)
        : "0x" + Key.ToString("x", CultureInfo.InvariantCulture);
    public long Calls { get; internal set; }
    /// <summary>Entry → exit.</summary>
    public long TotalNs { get; internal set; }
    /// <summary>On CPU inside the syscall: kernel time.</summary>
    public long CpuNs { get; internal set; }
    /// <summary>Off CPU and blocked inside the syscall (until the wakeup).</summary>
    public long BlockedNs { get; internal set; }
    /// <summary>Off CPU but runnable inside the syscall (woken or preempted, waiting for a CPU).</summary>
    public long ReadyNs { get; internal set; }
    /// <summary>Calls during which the thread was switched out at least once (blocked or preempted).</summary>
    public long OffCpuCalls { get; internal set; }

    internal void Reset() => Calls = TotalNs = CpuNs = BlockedNs = ReadyNs = OffCpuCalls = 0;
}

/// <summary>One thread's syscall time, in total and per syscall. The totals are set when the pass completes.</summary>
public sealed class ThreadKernelStats
{
    public ThreadKernelStats(int tid) => Tid = tid;

    public int Tid { get; }
    public long Calls { get; internal set; }
    public long SyscallNs { get; internal set; }
    /// <summary>Kernel time: on CPU inside traced syscalls.</summary>
    public long KernelCpuNs { get; internal set; }
    public long BlockedNs { get; internal set; }
    public long ReadyNs { get; internal set; }
    /// <summary>Calls during which the thread was switched out at least once.</summary>
    public long OffCpuCalls { get; internal set; }
    public Dictionary<long, SyscallStats> BySyscall { get; } = new();

    internal void Reset()
    {
        Calls = SyscallNs = KernelCpuNs = BlockedNs = ReadyNs = OffCpuCalls = 0;
        foreach (var s in BySyscall.Values) s.Reset();
    }

    /// <summary>
    /// Sets the totals to the sums over <see cref="BySyscall"/> (every call is counted in exactly one of them): the
    /// analyzer updates only the per-syscall figures per call and calls this once when the pass completes.
    /// </summary>
    internal void SumSyscalls()
    {
        Calls = SyscallNs = KernelCpuNs = BlockedNs = ReadyNs = OffCpuCalls = 0;
        foreach (var s in BySyscall.Values)
        {
            Calls += s.Calls;
            OffCpuCalls += s.OffCpuCalls;
            SyscallNs += s.TotalNs;
            KernelCpuNs += s.CpuNs;
            BlockedNs += s.BlockedNs;
            ReadyNs += s.ReadyNs;
        }
    }
}
