namespace TraceLab.Sweeps.Claims;

/// <summary>The 19 claims of docs/claims.md, in its order, each with the predefined sweep that judges it.</summary>
public static class ClaimCatalog
{
    /// <summary>
    /// Measured elsewhere (untraced, 16 CPUs, 3 repeats), cited where a larger machine is discussed: the issue that
    /// asked for the claims report (docs/claims-results.md).
    /// </summary>
    private const string Reference16 = "Reference measured elsewhere (untraced, 16 CPUs, 3 repeats): ";

    public static IReadOnlyList<SeedClaim> All { get; } =
    [
        new("TM1", "000", "A free critical section is taken without entering the kernel, every mutex wait enters it: "
            + "with 1–4 threads a critical section is much faster and spends far less system time.",
            "timemutex", "tm1", 1, false, null),
        new("TM2", "000", "Elapsed time grows roughly linearly with the nesting depth and with the CPU work done "
            + "while holding the lock.", "timemutex", "tm2", 1, false, null),
        new("TM3", "000", "Two nested critical sections cost about twice one, but start to degrade at the same depth "
            + "and work as one.", "timemutex", "tm2", 1, false, null),
        new("TM4", "000", "From about five threads contending for one critical section, elapsed and kernel time grow "
            + "faster than the work; a mutex degrades gracefully.", "timemutex", "tm4", 4, true,
            "with ≥ 4 CPUs (≥ 10 to run every thread of the 5–10-thread points at once): the critical section's "
            + "elapsed and system time per thread ≥ 1.5× higher at 5–10 threads than at 2–4 threads, "
            + "the mutex's "
            + "< 1.5×. " + Reference16 + "cs system time rose to ~35 s for 20 threads in 2.6 s elapsed — the "
            + "kernel-time degradation TM4 describes.",
            "the rule compares 2–4 threads with 5–10: with fewer than 4 CPUs the 3- and 4-thread baseline is "
            + "already "
            + "oversubscribed, so growth from 5 threads cannot be told apart from having more threads than CPUs"),
        new("TM5", "000", "Letting only a few threads run at once (a gating semaphore) restores critical-section "
            + "performance; one active thread is best.", "timemutex", "tm5", 1, false, null),
        new("TM6", "000", "Yielding the CPU while holding the lock is very costly; yielding after releasing it costs "
            + "almost nothing.", "timemutex", "tm6", 1, false, null),
        new("TM7", "000", "Running in the background (lower priority) increases a critical section's kernel time, "
            + "because more threads are ready.", "timemutex", "tm7", 1, false, null),
        new("TM8", "000", "On a multiprocessor, threads contending for one lock run slower than on one CPU; "
            + "confining them to one CPU helps.", "timemutex", "tm8", 2, true,
            "on M CPUs, idle: pinned to one CPU faster than spread over all M at every delay (every repeat), with "
            + "the traced cross-CPU wakeups and migrations of the spread runs growing with M.",
            "a multiprocessor is needed to compare with one CPU"),
        new("TM9", "000", "On a two-processor machine, with every thread active, 2n threads can finish sooner than "
            + "2n − 1 threads, although they do more work.", "timemutex", "tm9", 2, true,
            "the claim is about two processors; on M > 2 CPUs run the sweep pinned to two of them (--affinity 0-1) "
            + "to test the seed's setting: some n with every 2n-thread run faster than every (2n−1)-thread run. "
            + Reference16 + "the even/odd effect was absent — elapsed grew monotonically with threads for both cs "
            + "and mutex.",
            "the seed's setting is two processors"),
        new("TM10", "000", "An auto-reset event or a binary semaphore used as a lock is slightly faster than a mutex, "
            + "which must track its owner.", "timemutex", "tm10", 1, false, null),
        new("TH1", "001", "With N CPU-bound threads on M cores, the run is fastest with M threads active; it gets "
            + "slower from M to 2M active, and stays flat beyond 2M.", "throttle", "th1", 2, true,
            "the same shape at its own M (best at M active, slower at 2M, flat from 2M to 64 and with no "
            + "semaphore); the 64-thread sweep keeps a 'beyond 2M' region only for M ≤ 32.",
            "M = 1 has no 'more threads than cores' to compare"),
        new("TH2", "001", "The loss beyond M active threads comes from extra context switches: preemptions between "
            + "the CPU-bound threads.", "throttle", "th1", 2, true,
            "involuntary switches per thread higher at 2M than at M active, at its own M.",
            "M = 1 has no 'more threads than cores' to compare"),
        new("SR1", "003", "A sender that sets the event while holding the lock starves the receiver: few iterations "
            + "and many context switches per iteration.", "sendrecv", "sr", 1, false, null),
        new("SR2", "003", "Setting the event after leaving the lock gives the receiver many times more iterations.",
            "sendrecv", "sr", 1, false, null),
        new("SR3", "003", "Replacing the lock by interlocked operations cuts the context switches by orders of "
            + "magnitude.", "sendrecv", "sr", 1, false, null),
        new("SR4", "003", "A lock that is never contended costs almost nothing; the number of context switches is "
            + "what shows congestion.", "sendrecv", "sr", 1, false, null),
        new("TP1", "004", "CPU-bound work does not finish sooner concurrently than serially on one CPU; the threads "
            + "cost about 10 % for short computations and 1 % for long ones.", "thrdperf", "tp1", 1, false, null),
        new("TP2", "004", "I/O-bound work finishes much sooner concurrently: concurrent elapsed grows linearly with "
            + "the number of computations, serial much faster.", "thrdperf", "tp2", 1, false, null),
        new("TP3", "004", "For long CPU-bound computations of unequal length, running them concurrently improves the "
            + "average response time.", "thrdperf", "tp3", 1, false, null),
    ];

    /// <summary>The predefined sweeps the claims need, once each, in the order of the claims.</summary>
    public static IReadOnlyList<SweepDefinition> Sweeps() =>
        All.Select(c => (c.Workload, c.Sweep)).Distinct()
            .Select(k => PredefinedSweeps.All.Single(d => d.Workload == k.Workload && d.Name == k.Sweep)).ToList();

    public static SeedClaim? Find(string id) =>
        All.FirstOrDefault(c => c.Id.Equals(id, StringComparison.OrdinalIgnoreCase));
}
