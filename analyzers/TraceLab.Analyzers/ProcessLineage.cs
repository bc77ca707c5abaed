using System.Runtime.CompilerServices;
using TraceLab.Core;

namespace TraceLab.Analyzers;

/// <summary>
/// Which process a thread belongs to, at any time in the trace: the one place that answers it
/// (docs/metrics.md, "Processes"). It learns from the pass's creation, exec and exit events (fed by
/// <see cref="ThreadAccounting"/>, which owns it) and reads what the trace states outright: TraceLab's
/// TRACELAB_THREADS listing, the target pids and the marker thread (<see cref="MeasuredRegion"/>), and the process ids
/// a perf or ETW reader stated (the reader's <see cref="ThreadTable"/>). Three questions, three methods:
/// <see cref="ProcessOf(int)"/> during the pass (lock scoping, wake sources: stated pids are not consulted, so a
/// pass gives the same answer with or without the reader's table), <see cref="ProcessOf(int, ThreadTable)"/> for
/// exports (the stated pid first), and <see cref="ReportedProcessOf"/> for reports (kernel threads as one group).
/// Memory grows with the threads created in the trace, never with its length.
/// </summary>
/// <param name="region">The region whose listing, targets and marker thread the lineage reads.</param>
public sealed class ProcessLineage(MeasuredRegion region)
{
    private readonly MeasuredRegion _region = region;
    private readonly Dictionary<int, int> _parent = new();
    private readonly HashSet<int> _execed = [];
    private readonly HashSet<int> _forkedProcesses = [];
    private readonly Dictionary<int, long> _born = [];
    private readonly Dictionary<int, long> _ended = [];
    /// <summary>Bumped by every exec, fork and marker: what <see cref="KnownProcessOf(int)"/> reads changed.</summary>
    private int _version = 1;
    /// <summary>
    /// Per slot, <see cref="KnownProcessOf(int)"/> and <see cref="ProcessOf(int)"/> as of a <see cref="_version"/>
    /// (0: never).
    /// </summary>
    private (int Version, int Known, int Process)[] _remembered = [];

    /// <summary>Thread → the task that forked it (from sched_process_fork).</summary>
    public IReadOnlyDictionary<int, int> Parents => _parent;

    /// <summary>When each thread created in the trace was forked (its fork event's timestamp).</summary>
    public IReadOnlyDictionary<int, long> Born => _born;

    /// <summary>When each thread that exited in the trace did (its exit event's timestamp).</summary>
    public IReadOnlyDictionary<int, long> Ended => _ended;

    /// <summary>Threads that exec'd a program: each is its process's leader (its tid is the pid).</summary>
    public IReadOnlySet<int> Execed => _execed;

    /// <summary>
    /// Tasks whose creation event said they are a new process (task_newtask without CLONE_THREAD, perf FORK with
    /// pid = tid): each leads its own process from its creation on, exec or not.
    /// </summary>
    public IReadOnlySet<int> ForkedProcesses => _forkedProcesses;

    /// <summary>A thread exec'd a program.</summary>
    internal void OnExec(int tid)
    {
        if (tid > 0 && _execed.Add(tid)) _version++;
    }

    /// <summary>A task was created; <paramref name="kind"/> says whether as a process, a thread, or unknown.</summary>
    internal void OnFork(int parent, int child, ForkChild kind, long t)
    {
        _version++;
        _parent[child] = parent;
        _born[child] = t;
        // Unknown (sched_process_fork after task_newtask, or an older trace) keeps what is known; a reused tid is told
        // again by its own creation event.
        if (kind == ForkChild.Process) _forkedProcesses.Add(child);
        else if (kind == ForkChild.Thread) _forkedProcesses.Remove(child);
    }

    /// <summary>A thread exited.</summary>
    internal void OnExit(int tid, long t)
    {
        if (tid > 0) _ended[tid] = t;
    }

    /// <summary>A marker may have changed the region's listing, targets or marker thread.</summary>
    internal void OnMarker() => _version++;

    /// <summary>
    /// The process a thread belongs to, as far as the trace says so far: TraceLab's TRACELAB_THREADS listing; a
    /// thread created as a process (its creation event says so), a thread that exec'd, a target pid or the workload's
    /// marker thread is a process leader; otherwise the process of the thread that created it (a forked child whose
    /// creation event does not say what it is counts as its parent's process until listed). A thread with no known
    /// creator is its own process.
    /// </summary>
    public int ProcessOf(int tid) => KnownProcessOf(tid) is var p and > 0 ? p : CreationRoot(tid);

    /// <summary>
    /// <see cref="ProcessOf(int)"/> of a thread whose pass slot the caller holds, remembered per slot as
    /// <see cref="KnownProcessOf(int, int)"/> is: analyses that ask on every syscall or waking (the wake chains, the
    /// wait classes) would otherwise walk the creation chain through several hashed lookups each time.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public int ProcessOf(int tid, int slot) => Remembered(tid, slot).Process;

    /// <summary>
    /// The process the trace states for the thread (a perf sample's pid, an ETW thread event's process:
    /// <see cref="ThreadTable.TryGetProcess"/>) when it does, else <see cref="ProcessOf(int)"/>.
    /// </summary>
    public int ProcessOf(int tid, ThreadTable names) =>
        names.TryGetProcess(tid, out var stated) ? stated : ProcessOf(tid);

    /// <summary>
    /// <see cref="ProcessOf(int)"/> when the trace identifies the process (a listing, an exec, a target or marker pid
    /// up the creation chain); 0 when it does not (threads that predate a capture made by another tool).
    /// </summary>
    public int KnownProcessOf(int tid)
    {
        var cur = tid;
        for (var depth = 0; depth < 64; depth++)
        {
            if (_region.ProcessOfThread.TryGetValue(cur, out var listed)) return listed;
            if (_forkedProcesses.Contains(cur) || _execed.Contains(cur) || cur == _region.MarkerTid
                || _region.TargetPids.Contains(cur)) return cur;
            if (!_parent.TryGetValue(cur, out var parent) || parent <= 0) return 0;
            cur = parent;
        }
        return 0;
    }

    /// <summary>
    /// <see cref="KnownProcessOf(int)"/> of a thread (tid &gt; 0) whose pass slot the caller holds, remembered per
    /// slot until an exec, a fork or a marker (the only events that change what it reads): a lock syscall would
    /// otherwise walk the creation chain through several hashed lookups, on every lock operation.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public int KnownProcessOf(int tid, int slot) => Remembered(tid, slot).Known;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private (int Version, int Known, int Process) Remembered(int tid, int slot)
    {
        var cache = _remembered;
        return (uint)slot < (uint)cache.Length && cache[slot].Version == _version ? cache[slot] : Remember(slot, tid);
    }

    /// <summary>Both answers for the thread, remembered in its slot (not when the slot is negative).</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private (int Version, int Known, int Process) Remember(int slot, int tid)
    {
        var known = KnownProcessOf(tid);
        var answers = (_version, known, known > 0 ? known : CreationRoot(tid));
        if (slot < 0) return answers;
        if (slot >= _remembered.Length)
            Array.Resize(ref _remembered, Math.Max(slot + 1, Math.Max(16, _remembered.Length * 2)));
        return _remembered[slot] = answers;
    }

    /// <summary>
    /// The first creator up <paramref name="tid"/>'s creation chain whose own creator is not in the trace: the
    /// process of a chain nothing identifies (a trace with sched_process_fork only, where a new thread and a forked
    /// child look alike), so threads created in the trace join their creator's process as documented.
    /// </summary>
    private int CreationRoot(int tid)
    {
        var cur = tid;
        for (var depth = 0; depth < 64 && _parent.TryGetValue(cur, out var parent) && parent > 0; depth++) cur = parent;
        return cur;
    }

    /// <summary>
    /// The threads that descend (by fork) from <paramref name="rootPid"/>, including it, among
    /// <paramref name="seen"/> and the threads created in the trace; in tid order.
    /// </summary>
    public IReadOnlyList<int> Descendants(int rootPid, IEnumerable<int> seen)
    {
        var result = new List<int>();
        foreach (var tid in seen.Union(_parent.Keys))
        {
            var cur = tid;
            for (var depth = 0; depth < 64; depth++)
            {
                if (cur == rootPid) { result.Add(tid); break; }
                if (!_parent.TryGetValue(cur, out cur)) break;
            }
        }
        result.Sort();
        return result;
    }

    // The report's view: kernel threads as one group (docs/metrics.md, "Processes").

    /// <summary>kthreadd: the parent of every kernel thread on Linux, and the group reports show them under.</summary>
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

    private readonly Dictionary<int, bool> _kernel = new();

    /// <summary>
    /// The process a report shows <paramref name="tid"/> under: <see cref="KernelThreadsPid"/> for a kernel thread,
    /// else <see cref="ProcessOf(int, ThreadTable)"/>. Idle (tid 0, swapper/N) is never a thread. Ask after the pass:
    /// the answer is kept per thread.
    /// </summary>
    public int ReportedProcessOf(int tid, ThreadTable names) =>
        IsKernelThread(tid, names) ? KernelThreadsPid : ProcessOf(tid, names);

    /// <summary>
    /// A kernel thread: kthreadd (tid 2) created it in the trace, or, when the trace does not say who created it, its
    /// name is one of the kernel's own thread names (kworker/…, ksoftirqd/…, migration/…, rcu_…, …). A thread that
    /// runs a program (exec, or a creator that did) is never one.
    /// </summary>
    public bool IsKernelThread(int tid, ThreadTable names)
    {
        if (tid <= 0) return false;
        if (_kernel.TryGetValue(tid, out var known)) return known;
        return _kernel[tid] = ClassifyKernelThread(tid, names);
    }

    private bool ClassifyKernelThread(int tid, ThreadTable names)
    {
        var cur = tid;
        for (var depth = 0; depth < 64; depth++)
        {
            if (cur == KernelThreadsPid) return true;
            if (_execed.Contains(cur)) return false;
            if (!_parent.TryGetValue(cur, out var parent) || parent <= 0) break;
            cur = parent;
        }
        // The trace knows the process (a listing, a target) or states one the thread does not lead (kernel threads
        // are single-threaded processes): a user thread. Otherwise the name is all there is.
        if (KnownProcessOf(tid) > 0) return false;
        if (names.TryGetProcess(tid, out var stated) && stated != ThreadIds.KernelTid(tid)) return false;
        return names.TryGetName(cur, out var name) && IsKernelName(name)
            || names.TryGetName(tid, out var own) && IsKernelName(own);
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
