namespace TraceLab.Workloads;

/// <summary>Asche's THRDPERF (seed 004): computations of unequal length run serially or one thread each.</summary>
public static class ThrdPerfWorkload
{
    public static readonly IReadOnlyDictionary<string, long> Kinds =
        new Dictionary<string, long>(StringComparer.OrdinalIgnoreCase) { ["cpu"] = 1, ["io"] = 2 };
    public static readonly IReadOnlyDictionary<string, long> Modes =
        new Dictionary<string, long>(StringComparer.OrdinalIgnoreCase) { ["serial"] = 1, ["concurrent"] = 2 };
    public static readonly IReadOnlyDictionary<string, long> Orders =
        new Dictionary<string, long>(StringComparer.OrdinalIgnoreCase) { ["descending"] = 1, ["ascending"] = 2 };

    public static WorkloadDefinition Definition { get; } = new()
    {
        Name = "thrdperf",
        Seed = "004",
        Description = "THRDPERF: computations of bias, 2*bias, ... ms, CPU- or I/O-bound, serially or one thread each",
        Parameters =
        [
            new("kind", "cpu (calibrated busy loop) or io (sleep)", 1, 2, 1) { Names = Kinds },
            new("mode", "serial (one thread, one after another) or concurrent (one thread per computation)", 1, 2,
                1) { Names = Modes },
            new("computations", "number of computations; computation k lasts k*bias ms", 2, 20, 5),
            new("bias", "delay bias in ms (the seed: 10 to 2430)", 1, 100_000, 10),
            new("order", "descending (longest first: the seed's worst case) or ascending", 1, 2, 1) { Names = Orders },
            new("max-concurrency", "computations running at once when concurrent (0 = all)", 0, 20, 0),
            WorkloadParameters.Affinity(),
            WorkloadParameters.Priority(),
        ],
        Scenarios =
        [
            new("cpu-serial", "5 CPU-bound computations of 100..500 ms, one after another, longest first",
                ["TP1", "TP3"], P(("kind", "cpu"), ("mode", "serial"), ("bias", "100"))),
            new("cpu-concurrent", "5 CPU-bound computations of 100..500 ms, one thread each", ["TP1", "TP3"],
                P(("kind", "cpu"), ("mode", "concurrent"), ("bias", "100"))),
            new("io-serial", "5 I/O-bound (sleeping) computations of 100..500 ms, one after another", ["TP2"],
                P(("kind", "io"), ("mode", "serial"), ("bias", "100"))),
            new("io-concurrent", "5 I/O-bound (sleeping) computations of 100..500 ms, one thread each", ["TP2"],
                P(("kind", "io"), ("mode", "concurrent"), ("bias", "100"))),
            new("cpu-pinned-concurrent",
                "5 CPU-bound computations, one thread each, all on CPU 0 (the seed's single processor)", ["TP1", "TP3"],
                P(("kind", "cpu"), ("mode", "concurrent"), ("bias", "100"), ("affinity", "0"))),
        ],
        Arguments = v =>
        [
            "--kind", v["kind"], "--mode", v["mode"], "--computations", v["computations"], "--bias", v["bias"],
            "--order", v["order"], "--max-concurrency", v["max-concurrency"],
            "--affinity", v["affinity"], "--priority", v["priority"],
        ],
    };

    private static Dictionary<string, string> P(params (string Key, string Value)[] values) =>
        WorkloadParameters.Values(values);
}
