namespace TraceLab.Workloads;

/// <summary>Hart's TimeMutex (seed 000): threads contending for one lock of a chosen kind.</summary>
public static class TimeMutexWorkload
{
    public static readonly IReadOnlyDictionary<string, long> LockKinds =
        new Dictionary<string, long>(StringComparer.OrdinalIgnoreCase)
        {
            ["cs"] = 1,
            ["cs-nested"] = 2,
            ["mutex"] = 3,
            ["event"] = 4,
            ["semaphore"] = 5,
        };

    public static WorkloadDefinition Definition { get; } = new()
    {
        Name = "timemutex",
        Seed = "000",
        Description = "Hart's TimeMutex: N threads enter and leave one critical section / mutex / event / semaphore",
        Parameters =
        [
            new("which", "1 cs (user-space fast path), 2 cs-nested, 3 mutex (kernel object), 4 event, 5 semaphore", 1,
                5, 1) { Names = LockKinds },
            new("depth", "nested acquisitions per iteration (0 = no synchronization)", 0, 1000, 1),
            new("delay", "WasteTime factor: CPU work while holding the lock", 0, 1_000_000, 0),
            new("threads", "threads contending for the lock", 1, 64, 4),
            new("sleep-points", "0 none, 1 yield holding the lock, 2 yield after releasing, 3 both", 0, 3, 0),
            new("active", "threads allowed to run at once by the gating semaphore (default: all)", 0, 64, 0),
            new("iterations", "iterations per thread (the seed: 1,000,000)", 1, 1_000_000_000, 1_000_000),
            new("affinity", "CPUs the process may run on: all, or a list like 0 or 0-1", 0, 0,
                0) { TextValidator = CpuList.Validate, DefaultText = "all" },
            new("priority", "nice level -20..19 (Windows: priority class)", -20, 19, 0),
        ],
        Scenarios =
        [
            new("cs", "4 threads, critical section (futex lock with user-space fast path)", ["TM1"],
                P(("which", "1"), ("iterations", "1000000"))),
            new("cs-nested", "4 threads, two nested critical sections", ["TM3"],
                P(("which", "2"), ("iterations", "1000000"))),
            new("mutex", "4 threads, kernel mutex (SysV semaphore with SEM_UNDO: every acquire enters the kernel)",
                ["TM1", "TM4"], P(("which", "3"), ("iterations", "100000"))),
            new("event", "4 threads, auto-reset event used for mutual exclusion", ["TM10"],
                P(("which", "4"), ("iterations", "100000"))),
            new("semaphore", "4 threads, binary semaphore used for mutual exclusion", ["TM10"],
                P(("which", "5"), ("iterations", "100000"))),
            new("sleep-holding", "4 threads, critical section, yield while holding it (SleepPoints=1)", ["TM6"],
                P(("which", "1"), ("sleep-points", "1"), ("iterations", "100000"))),
            new("sleep-released", "4 threads, critical section, yield after releasing it (SleepPoints=2)", ["TM6"],
                P(("which", "1"), ("sleep-points", "2"), ("iterations", "100000"))),
            new("many-threads", "8 threads contending for one critical section", ["TM4"],
                P(("which", "1"), ("threads", "8"), ("iterations", "1000000"))),
            new("serialized", "6 threads, critical section, 1 active at a time (gating semaphore)", ["TM5"],
                P(("which", "1"), ("threads", "6"), ("active", "1"), ("iterations", "1000000"))),
            new("pinned", "4 threads, critical section, all on CPU 0", ["TM8"],
                P(("which", "1"), ("affinity", "0"), ("iterations", "1000000"))),
            new("background", "4 threads, critical section, nice 10 (background priority)", ["TM7"],
                P(("which", "1"), ("priority", "10"), ("iterations", "1000000"))),
        ],
        Arguments = Arguments,
        Normalize = NormalizeActive,
    };

    /// <summary>The seed's NumThActive: 0 (or more than NumThreads) means every thread is active.</summary>
    private static void NormalizeActive(Dictionary<string, string> v)
    {
        var threads = long.Parse(v["threads"], System.Globalization.CultureInfo.InvariantCulture);
        var active = long.Parse(v["active"], System.Globalization.CultureInfo.InvariantCulture);
        if (active == 0 || active > threads) v["active"] = v["threads"];
    }

    private static Dictionary<string, string> P(params (string Key, string Value)[] values) =>
        values.ToDictionary(v => v.Key, v => v.Value, StringComparer.OrdinalIgnoreCase);

    private static IReadOnlyList<string> Arguments(IReadOnlyDictionary<string, string> v)
    {
        return
        [
            "--iterations", v["iterations"],
            "--affinity", v["affinity"],
            "--priority", v["priority"],
            v["which"], v["depth"], v["delay"], v["threads"], v["sleep-points"], v["active"],
        ];
    }
}
