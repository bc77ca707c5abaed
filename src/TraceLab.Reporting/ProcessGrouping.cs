using TraceLab.Analyzers;
using TraceLab.Core;

namespace TraceLab.Reporting;

/// <summary>
/// Which process a thread is reported under (docs/metrics.md, "Processes"): the process the trace's own events state
/// for it (<see cref="ThreadTable.Processes"/>: perf's sample pid, ETW thread events) or else the one the pass
/// inferred (<see cref="ThreadAccounting.ProcessOf"/>), except kernel threads, which are one group under kthreadd
/// (<see cref="KernelThreadsPid"/>). Idle (tid 0, swapper/N) is never a thread. A thread is a kernel thread when
/// kthreadd (tid 2) created it in the trace, or, when the trace does not say who created it, when its name is one
/// of the kernel's own thread names (kworker/…, ksoftirqd/…, migration/…, rcu_…, …). A thread that runs a program
/// (exec, or a creator that did) is never one.
/// </summary>
public sealed class ProcessGrouping
{
    /// <summary>kthreadd: the parent of every kernel thread on Linux.</summary>
    public const int KernelThreadsPid = 2;

    public const string KernelThreadsName = "kernel threads";

    // Names the kernel gives its own threads (kernel/kthread.c callers); "/N" suffixes name a CPU or a device.
    private static readonly string[] KernelPrefixes =
    [
        "kworker/", "ksoftirqd/", "migration/", "rcu_", "rcuc/", "rcuog/", "rcuop/", "rcuos/", "cpuhp/",
        "idle_inject/", "watchdog/", "irq/", "jbd2/", "xfsaild/", "napi/", "scsi_eh_", "scsi_tmf_", "kvm-", "nvme-",
        "iscsi_", "vfio-", "kthreadd", "kswapd", "kcompactd", "khugepaged", "ksmd", "kdevtmpfs", "kauditd",
        "khungtaskd", "oom_reaper", "kblockd", "kintegrityd", "kthrotld", "writeback", "ext4-rsv-conver", "psimon",
        "ipv6_addrconf", "mm_percpu_wq", "netns", "edac-poller", "devfreq_wq", "zswap", "kstrp", "blkcg_punt_bio",
        "tpm_dev_wq", "ata_sff", "kaluad", "kmpath", "charger_manager", "cryptd", "inet_frag_wq", "kipmi", "ksgxd",
        "slub_flushwq", "khvcd", "hwrng", "mmcqd/", "kdamond", "kverityd", "dm_bufio_cache", "kdmflush",
    ];

    // Short stems only with a digit after them: "md0_raid1", "card0-crtc0", "ttm0".
    private static readonly string[] KernelStems = ["md", "card", "ttm", "ena", "loop"];

    private readonly ThreadAccounting _accounting;
    private readonly ThreadTable _names;
    private readonly Dictionary<int, bool> _kernel = new();

    public ProcessGrouping(ThreadAccounting accounting, ThreadTable names)
    {
        _accounting = accounting;
        _names = names;
    }

    /// <summary>The process <paramref name="tid"/> is reported under.</summary>
    public int ProcessOf(int tid) =>
        IsKernelThread(tid) ? KernelThreadsPid
        : _names.TryGetProcess(tid, out var stated) ? stated
        : _accounting.ProcessOf(tid);

    public bool IsKernelThread(int tid)
    {
        if (tid <= 0) return false;
        if (_kernel.TryGetValue(tid, out var known)) return known;
        return _kernel[tid] = Classify(tid);
    }

    private bool Classify(int tid)
    {
        var cur = tid;
        for (var depth = 0; depth < 64; depth++)
        {
            if (cur == KernelThreadsPid) return true;
            if (_accounting.Execed.Contains(cur)) return false;
            if (!_accounting.Parents.TryGetValue(cur, out var parent) || parent <= 0) break;
            cur = parent;
        }
        // The trace knows the process (a listing, a target) or states one the thread does not lead (kernel threads
        // are single-threaded processes): a user thread. Otherwise the name is all there is.
        if (_accounting.KnownProcessOf(tid) > 0) return false;
        if (_names.TryGetProcess(tid, out var stated) && stated != ThreadIds.KernelTid(tid)) return false;
        return _names.TryGetName(cur, out var name) && IsKernelName(name)
            || _names.TryGetName(tid, out var own) && IsKernelName(own);
    }

    /// <summary>A name the kernel gives its own threads.</summary>
    public static bool IsKernelName(string name)
    {
        foreach (var prefix in KernelPrefixes)
            if (name.StartsWith(prefix, StringComparison.Ordinal)) return true;
        foreach (var stem in KernelStems)
            if (name.Length > stem.Length && name.StartsWith(stem, StringComparison.Ordinal)
                && char.IsAsciiDigit(name[stem.Length])) return true;
        return false;
    }
}
