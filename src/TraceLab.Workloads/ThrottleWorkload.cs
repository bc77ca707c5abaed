namespace TraceLab.Workloads;

/// <summary>
/// The semaphore throttle (seed 001): CPU-bound threads summing a series, optionally gated by a counting semaphore.
/// </summary>
public static class ThrottleWorkload
{
    /// <summary>
    /// 64 x 1.5M terms x 20 repeats: about 3 s on a 2-CPU machine (the seed's 30M took about a minute there).
    /// </summary>
    private const string ScenarioChunk = "1500000";

    public static WorkloadDefinition Definition { get; } = new()
    {
        Name = "throttle",
        Seed = "001",
        Description = "Semaphore throttle: N CPU-bound threads sum 1..N*chunk; a semaphore with `active` slots limits "
            + "how many run at once",
        Parameters =
        [
            new("threads", "CPU-bound threads, each summing its own slice", 1, 1024, 64),
            new("active", "semaphore slots: threads allowed to run at once (0 = no semaphore)", 0, 1024, 0),
            new("chunk", "terms per thread (the seed: 30,000,000)", 1, 4_000_000_000, 30_000_000),
            new("repeat", "times each thread recomputes its partial sum (the seed: 20)", 1, 1_000_000, 20),
            WorkloadParameters.Affinity(),
            WorkloadParameters.Priority(),
        ],
        Scenarios =
        [
            new("unthrottled", "64 threads, no semaphore: every thread competes for the CPUs", ["TH1", "TH2"],
                P(("active", "0"), ("chunk", ScenarioChunk))),
            new("one-active", "64 threads, 1 semaphore slot: strictly one after another", ["TH1"],
                P(("active", "1"), ("chunk", ScenarioChunk))),
            new("per-cpu", "64 threads, 2 slots: one running thread per CPU of a 2-CPU machine", ["TH1", "TH2"],
                P(("active", "2"), ("chunk", ScenarioChunk))),
            new("oversubscribed", "64 threads, 4 slots: two running threads per CPU of a 2-CPU machine", ["TH1", "TH2"],
                P(("active", "4"), ("chunk", ScenarioChunk))),
        ],
        Arguments = v =>
        [
            "--threads", v["threads"], "--active", v["active"], "--chunk", v["chunk"], "--repeat", v["repeat"],
            "--affinity", v["affinity"], "--priority", v["priority"],
        ],
        Validate = ValidateSum,
    };

    /// <summary>
    /// The workload sums 1 + ... + threads*chunk in a signed 64-bit integer; refuse sizes that overflow it.
    /// </summary>
    private static void ValidateSum(IReadOnlyDictionary<string, string> v)
    {
        var n = (System.Numerics.BigInteger)long.Parse(v["threads"], System.Globalization.CultureInfo.InvariantCulture)
            * long.Parse(v["chunk"], System.Globalization.CultureInfo.InvariantCulture);
        if (n * (n + 1) / 2 > long.MaxValue)
            throw new WorkloadException(
                $"--threads {v["threads"]} x --chunk {v["chunk"]}: the sum 1 + ... + {n} overflows 64 bits");
    }

    private static Dictionary<string, string> P(params (string Key, string Value)[] values) =>
        WorkloadParameters.Values(values);
}
