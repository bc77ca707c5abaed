using TraceLab.Analyzers;
using TraceLab.Analyzers.Kernel;
using TraceLab.Core;
using TraceLab.Workloads;

namespace TraceLab.Reporting.Sections;

/// <summary>
/// report.json "kernel": time in traced syscalls per thread, split into CPU (kernel time), blocked and runnable.
/// </summary>
public sealed class KernelSection
{
    /// <summary>False when the trace has no syscall events: kernel time is "not captured", not zero.</summary>
    public bool Captured { get; init; }
    public string? Note { get; init; }
    public long UnmatchedExits { get; init; }
    /// <summary>Sum of the threads' kernel CPU time in traced syscalls.</summary>
    public long KernelCpuNs { get; init; }
    /// <summary>
    /// Estimated per-call kernel cost outside the syscall tracepoints (entry/exit paths) of a call that stayed on CPU;
    /// 0 when not estimated.
    /// </summary>
    public long BoundaryNsPerCall { get; init; }
    public long BoundarySamples { get; init; }
    /// <summary>
    /// The same for a call during which the thread was switched out (its exit path restores more state).
    /// </summary>
    public long BoundaryNsPerOffCpuCall { get; init; }
    public long BoundaryOffCpuSamples { get; init; }
    /// <summary>
    /// Sum of the threads' estimated kernel time (<see cref="KernelThreadSection.EstimatedKernelNs"/>).
    /// </summary>
    public long EstimatedKernelNs { get; init; }
    /// <summary>The workload's getrusage system time summed over its threads (RUSAGE_THREAD), for comparison.</summary>
    public long? RusageSystemNs { get; init; }
    public List<KernelThreadSection> Threads { get; init; } = [];
}

public sealed class KernelThreadSection
{
    public int Tid { get; init; }
    public required string Name { get; init; }
    public long RunNs { get; init; }
    public long KernelCpuNs { get; init; }
    /// <summary>Kernel CPU in traced syscalls + calls × the boundary cost, at most the run time.</summary>
    public long EstimatedKernelNs { get; init; }
    /// <summary>
    /// Run time outside traced syscalls: user time plus untraced kernel work (faults, interrupts, untraced syscalls).
    /// </summary>
    public long OutsideSyscallsNs { get; init; }
    public long SyscallCalls { get; init; }
    /// <summary>Calls during which the thread was switched out at least once (blocked or preempted).</summary>
    public long OffCpuCalls { get; init; }
    public long SyscallNs { get; init; }
    public long BlockedInSyscallsNs { get; init; }
    public long ReadyInSyscallsNs { get; init; }
    public long? RusageSystemNs { get; init; }
    public long? RusageUserNs { get; init; }
    public List<SyscallSection> Syscalls { get; init; } = [];
}

public sealed class SyscallSection
{
    public required string Name { get; init; }
    public long Calls { get; init; }
    public long TotalNs { get; init; }
    public long CpuNs { get; init; }
    public long BlockedNs { get; init; }
    public long ReadyNs { get; init; }
}

internal static class KernelSectionBuilder
{
    public static KernelSection Build(
        KernelTimeAnalyzer k, ThreadAccounting accounting, IReadOnlyList<int> tids, ThreadTable names,
        WorkloadResult? workload)
    {
        if (!k.SawSyscalls)
            return new KernelSection
            {
                Captured = false,
                Note = "not captured: the trace has no syscall events (Linux: trace with --syscalls lock or all; ETW: "
                    + "enable the SystemCall keyword)",
            };
        var byTid = workload?.Threads.ToDictionary(t => t.Tid) ?? [];
        var threads = new List<KernelThreadSection>();
        foreach (var tid in tids)
        {
            var run = accounting.Threads.TryGetValue(tid, out var ts) ? ts.RunNs : 0;
            var s = k.Threads.GetValueOrDefault(tid);
            var w = byTid.GetValueOrDefault(tid);
            var calls = s?.Calls ?? 0;
            var offCpuCalls = s?.OffCpuCalls ?? 0;
            threads.Add(new KernelThreadSection
            {
                Tid = tid,
                Name = names.NameOf(tid),
                RunNs = run,
                KernelCpuNs = s?.KernelCpuNs ?? 0,
                EstimatedKernelNs = Math.Min(run,
                    (s?.KernelCpuNs ?? 0) + (calls - offCpuCalls) * k.BoundaryNs
                        + offCpuCalls * k.BoundaryAfterOffCpuNs),
                OutsideSyscallsNs = Math.Max(0, run - (s?.KernelCpuNs ?? 0)),
                SyscallCalls = calls,
                OffCpuCalls = offCpuCalls,
                SyscallNs = s?.SyscallNs ?? 0,
                BlockedInSyscallsNs = s?.BlockedNs ?? 0,
                ReadyInSyscallsNs = s?.ReadyNs ?? 0,
                RusageSystemNs = w?.SystemNs,
                RusageUserNs = w?.UserNs,
                Syscalls = s is null ? []
                    : s.BySyscall.Values.Where(c => c.Calls > 0).OrderByDescending(c => c.TotalNs).ThenBy(c => c.Key)
                    .Select(c => new SyscallSection
                    {
                        Name = c.Name,
                        Calls = c.Calls,
                        TotalNs = c.TotalNs,
                        CpuNs = c.CpuNs,
                        BlockedNs = c.BlockedNs,
                        ReadyNs = c.ReadyNs
                    })
                    .ToList(),
            });
        }
        return new KernelSection
        {
            Captured = true,
            UnmatchedExits = k.UnmatchedExits,
            KernelCpuNs = threads.Sum(t => t.KernelCpuNs),
            BoundaryNsPerCall = k.BoundaryNs,
            BoundarySamples = k.BoundarySamples,
            BoundaryNsPerOffCpuCall = k.BoundaryAfterOffCpuNs,
            BoundaryOffCpuSamples = k.BoundaryAfterOffCpuSamples,
            EstimatedKernelNs = threads.Sum(t => t.EstimatedKernelNs),
            RusageSystemNs = workload is null ? null : workload.Threads.Sum(t => t.SystemNs),
            Threads = threads,
        };
    }
}
