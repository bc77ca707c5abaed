using System.Globalization;
using TraceLab.Sweeps.Calibration;
using TraceLab.Sweeps.Verdicts;

namespace TraceLab.Sweeps;

/// <summary>
/// The sweeps that reproduce the seeds' graphs (docs/claims.md), each with the verdict rules of the
/// claims it tests. Sizes are for a user's full run (minutes); shrink them with overrides such as --iterations.
/// </summary>
public static class PredefinedSweeps
{
    private static readonly IReadOnlyList<string> Threads1To4 = ["1", "2", "3", "4"];

    /// <summary>
    /// The shortest elapsed time of a point of a calibrated sweep (tm2): long against a preemption or a timer tick
    /// on a shared 2-CPU machine.
    /// </summary>
    public const double MinPointSeconds = 0.5;

    // Calibrated series run different iteration counts: their points compare per iteration.
    private const string PerIteration = SweepMetrics.ElapsedPerIteration;

    private static readonly string[] TimeCites =
        ["involPerThread", "volPerThread", "readyMsPerThread", "syscallsPerIteration"];

    public static IReadOnlyList<SweepDefinition> All { get; } = Build();

    /// <summary>Finds a sweep by name (tm4) or by a claim it tests (TM3 → tm2), case-insensitive.</summary>
    public static SweepDefinition? Find(string workload, string nameOrClaim) =>
        All.FirstOrDefault(d => d.Workload.Equals(workload, StringComparison.OrdinalIgnoreCase)
            && d.Name.Equals(nameOrClaim, StringComparison.OrdinalIgnoreCase))
        ?? All.FirstOrDefault(d => d.Workload.Equals(workload, StringComparison.OrdinalIgnoreCase)
            && d.Claims.Contains(nameOrClaim, StringComparer.OrdinalIgnoreCase));

    private static IReadOnlyList<SweepDefinition> Build()
    {
        var m = Environment.ProcessorCount;
        var activeValues = new[] { 1, 2, 3, 4, 6, 8, 16, 32, 64, m, 2 * m }.Where(v => v <= 64).Distinct().Order()
            .Select(I).Append("0").ToList();
        var csVsMutex = SweepSeries.Grid(("which", ["cs", "mutex"]));
        return
        [
            new()
            {
                Name = "tm1", Workload = "timemutex", Claims = ["TM1"],
                Title = "critical section vs mutex, 1..4 threads, depth 1, delay 0",
                Base = P(("depth", "1"), ("delay", "0"), ("iterations", "200000")),
                XParameter = "threads", XValues = Threads1To4, XLabel = "threads",
                Series = csVsMutex,
                Verdicts =
                [
                    new DominanceRule("TM1", "cs faster than mutex (elapsed)", "elapsed",
                        new PointPairs("which", "cs", "mutex")) { Cite = TimeCites },
                    new DominanceRule("TM1", "cs spends less system time", "system",
                        new PointPairs("which", "cs", "mutex")) { Cite = ["syscallsPerIteration"] },
                ],
                Notes = "syscalls per acquisition (traced.syscallsPerIteration, depth 1) need --trace",
            },
            new()
            {
                Name = "tm2", Workload = "timemutex", Claims = ["TM2", "TM3"],
                Title = "depth 1,5,10 × delay 0,1,5,10 for cs, cs-nested, mutex, 4 threads",
                Base = P(("threads", "4"), ("iterations", "50000")),
                XParameter = "depth", XValues = ["1", "5", "10"], XLabel = "depth (nested acquisitions per iteration)",
                Series = SweepSeries.Grid(("which", ["cs", "cs-nested", "mutex"]), ("delay", ["0", "1", "5", "10"])),
                // cs runs at 50,000 iterations last 3–80 ms: far too short to judge on a shared machine.
                Calibration = new IterationCalibration("iterations", MinPointSeconds),
                PlotMetrics = [PerIteration, "elapsed", "system"],
                Verdicts =
                [
                    new LinearFitRule("TM2", "elapsed (per iteration) linear in depth", PerIteration, "depth"),
                    new LinearFitRule("TM2", "elapsed (per iteration) linear in delay", PerIteration, "delay"),
                    new RatioRule("TM3", "nested cs costs about double a single cs", PerIteration,
                        new PointPairs("which", "cs-nested", "cs"), 1.4, 3.0),
                    // One grid step on 3–4 values would accept almost anything; the seed says "exactly the same
                    // points".
                    new DegradationPointRule("TM3", "nested cs degrades at the same depth as a single cs", PerIteration,
                        new PointPairs("which", "cs-nested", "cs"), "depth", steps: 0),
                    new DegradationPointRule("TM3", "nested cs degrades at the same delay as a single cs", PerIteration,
                        new PointPairs("which", "cs-nested", "cs"), "delay", steps: 0),
                ],
                Notes = "iterations calibrated per series so every point lasts ≥ 0.5 s "
                    + "(--iterations N fixes them instead); judged per iteration",
            },
            new()
            {
                Name = "tm4", Workload = "timemutex", Claims = ["TM4"],
                Title = "threads 1..8 and 10, critical section vs mutex",
                Base = P(("depth", "1"), ("delay", "0"), ("iterations", "100000")),
                XParameter = "threads", XValues = ["1", "2", "3", "4", "5", "6", "7", "8", "10"], XLabel = "threads",
                Series = csVsMutex,
                Verdicts =
                [
                    new GrowthRule("TM4", "cs degrades non-linearly from 5 threads, mutex gracefully (elapsed)",
                        "elapsed", "cs", "mutex",
                        ["2", "3", "4"], ["5", "6", "7", "8", "10"]) { Cite = TimeCites },
                    new GrowthRule("TM4", "cs kernel time grows non-linearly from 5 threads, mutex's does not",
                        "system", "cs", "mutex",
                        ["2", "3", "4"], ["5", "6", "7", "8", "10"]) { Cite = ["syscallsPerIteration"] },
                ],
            },
            new()
            {
                Name = "tm5", Workload = "timemutex", Claims = ["TM5"],
                Title = "serialization: 1..N of N threads active (N = 6, 8), cs vs mutex",
                Base = P(("depth", "1"), ("delay", "0"), ("iterations", "100000")),
                XParameter = "active", XValues = ["1", "2", "3", "4", "5", "6", "7", "8"], XLabel =
                    "active threads (gating semaphore)",
                Series =
                [
                    SweepSeries.Of("cs, 6 threads", ("which", "cs"),
                        ("threads", "6")) with { OnlyX = ["1", "2", "3", "4", "5", "6"] },
                    SweepSeries.Of("cs, 8 threads", ("which", "cs"), ("threads", "8")),
                    SweepSeries.Of("mutex, 6 threads", ("which", "mutex"),
                        ("threads", "6")) with { OnlyX = ["1", "2", "3", "4", "5", "6"] },
                    SweepSeries.Of("mutex, 8 threads", ("which", "mutex"), ("threads", "8")),
                ],
                Verdicts =
                [
                    new ArgminRule("TM5", "1 active thread is best for cs", "elapsed", "1") { Series =
                        ["cs, 6 threads", "cs, 8 threads"], Cite = ["involPerThread", "readyMsPerThread"] },
                ],
            },
            new()
            {
                Name = "tm6", Workload = "timemutex", Claims = ["TM6"],
                Title = "sleep points 0..3: yield holding the lock vs after releasing it",
                Base = P(("depth", "1"), ("delay", "0"), ("iterations", "100000")),
                XParameter = "sleep-points", XValues = ["0", "1", "2", "3"], XLabel =
                    "sleep points (0 none, 1 holding, 2 after release, 3 both)",
                Series = csVsMutex,
                Verdicts =
                [
                    new DominanceRule(
                        "TM6", "yield while holding ≥ 2× slower than after releasing", "elapsed", new PointPairs(
                        "sleep-points", "2", "1")) { Factor = 2, Cite = ["volPerThread", "readyMsPerThread"] },
                    new RatioRule("TM6", "yield after releasing is nearly free (≤ 1.5× no yield)", "elapsed",
                        new PointPairs("sleep-points", "2", "0"), 0, 1.5),
                ],
            },
            new()
            {
                Name = "tm7", Workload = "timemutex", Claims = ["TM7"],
                Title = "background (nice 10, 19) vs foreground (nice 0), cs vs mutex, 4 threads",
                Base = P(("depth", "1"), ("delay", "0"), ("threads", "4"), ("iterations", "200000")),
                XParameter = "priority", XValues = ["0", "10", "19"], XLabel = "nice level",
                Series = csVsMutex,
                Verdicts =
                [
                    new DominanceRule("TM7", "cs system time higher at nice 10 than at nice 0", "system",
                        new PointPairs("priority", "0", "10"))
                    {
                        Where = p => p.Values.GetValueOrDefault("which") == "1", Cite =
                            ["readyMsPerThread", "involPerThread"],
                    },
                ],
                Notes = "on an otherwise idle machine nice changes little: the seed's effect came from competing "
                    + "foreground work",
            },
            new()
            {
                Name = "tm8", Workload = "timemutex", Claims = ["TM8"],
                Title = "SMP: all CPUs vs pinned to CPU 0, delay 0..10, critical section, 4 threads",
                Base = P(("which", "cs"), ("depth", "1"), ("threads", "4"), ("iterations", "200000")),
                XParameter = "delay", XValues = ["0", "1", "2", "5", "10"], XLabel = "delay (WasteTime factor)",
                Series =
                    [SweepSeries.Of("one CPU (0)", ("affinity", "0")), SweepSeries.Of("all CPUs", ("affinity", "all"))],
                Verdicts =
                [
                    new DominanceRule("TM8", "pinned to one CPU is faster", "elapsed", new PointPairs(
                        "affinity", "0", "all")) { Cite = ["crossCpuWakeups", "migrations", "involPerThread"] },
                ],
            },
            new()
            {
                Name = "tm9", Workload = "timemutex", Claims = ["TM9"],
                Title = "even/odd: threads 1..20, depth 1, delay 1, cs and mutex",
                Base = P(("depth", "1"), ("delay", "1"), ("iterations", "20000")),
                XParameter = "threads", XValues = Enumerable.Range(1, 20).Select(I).ToList(), XLabel = "threads",
                Series = csVsMutex,
                Verdicts =
                [
                    new EvenOddRule("TM9", "2n threads faster than 2n−1 for some n",
                        "elapsed") { Cite = ["handoffs", "crossCpuWakeups", "idleCpuMs", "runnableWhileIdleMs"] },
                ],
            },
            new()
            {
                Name = "tm10", Workload = "timemutex", Claims = ["TM10"],
                Title = "event and binary semaphore vs mutex for mutual exclusion, 1..4 threads",
                Base = P(("depth", "1"), ("delay", "0"), ("iterations", "100000")),
                XParameter = "threads", XValues = Threads1To4, XLabel = "threads",
                Series = SweepSeries.Grid(("which", ["event", "semaphore", "mutex"])),
                Verdicts =
                [
                    new DominanceRule("TM10", "event marginally faster than mutex (medians)", "elapsed", new PointPairs(
                        "which", "event", "mutex")) { MediansOnly = true, Cite = ["syscallsPerIteration"] },
                    new DominanceRule(
                        "TM10", "semaphore marginally faster than mutex (medians)", "elapsed", new PointPairs(
                        "which", "semaphore", "mutex")) { MediansOnly = true, Cite = ["syscallsPerIteration"] },
                ],
            },
            new()
            {
                Name = "th1", Workload = "throttle", Claims = ["TH1", "TH2"],
                Title = $"64 CPU-bound threads, 1..64 active and no semaphore (M = {m} CPUs here)",
                Base = P(("threads", "64"), ("chunk", "1000000"), ("repeat", "20")),
                XParameter = "active", XValues = activeValues, XLabel = "active threads (semaphore slots)", LogX = true,
                XNames = new Dictionary<string, string> { ["0"] = "none" },
                PlotMetrics = ["elapsed", "user", "system", "invol", "traced.involPerThread"],
                Verdicts =
                [
                    new ArgminRule("TH1", "best at M active (within 5 %)", "elapsed", "{cpus}"),
                    new DominanceRule(
                        "TH1", "slower at 2M than at M", "elapsed", new PointPairs("active", "{cpus}", "{2cpus}")),
                    new FlatRule("TH1", "flat beyond 2M (within 25 %)", "elapsed",
                        (x, d) => double.Parse(x, CultureInfo.InvariantCulture) is var v
                            && (v == 0 || v >= 2 * d.Cpus), "x ≥ 2M and none"),
                    new DominanceRule("TH2", "involuntary switches per thread rise from M to 2M (trace)",
                        "traced.involPerThread", new PointPairs("active", "{cpus}", "{2cpus}")),
                    new DominanceRule("TH2", "involuntary switches (getrusage) rise from M to 2M", "invol",
                        new PointPairs("active", "{cpus}", "{2cpus}")),
                ],
                Notes = "the seed sums 30,000,000 terms × 20 per thread; this sweep uses chunk 1,000,000 (override "
                    + "--chunk)",
            },
            new()
            {
                Name = "sr", Workload = "sendrecv", Claims = ["SR1", "SR2", "SR3", "SR4"],
                Title = "3 senders, 1 receiver: the four locking variants",
                Base = P(("senders", "3"), ("duration-ms", "2000")),
                XParameter = "variant", XValues =
                    ["event-inside-lock", "event-outside-lock", "lock-free", "receiver-only-lock"], XLabel = "variant",
                PlotMetrics = ["receiveCount", "receiver.switchesPerIteration", "switches", "user", "system"],
                Verdicts =
                [
                    new DominanceRule(
                        "SR1", "receiver starves: fewer receives inside than outside the lock", "receiveCount",
                        new PointPairs("variant", "event-inside-lock", "event-outside-lock")) { Cite =
                        ["futileWakeups", "futileShare"] },
                    // The receiver's own getrusage: the seed's table is per thread and the claim is about the receiver.
                    new DominanceRule("SR1", "receiver: more context switches per receive inside than outside the lock "
                        + "(receiver thread's own counts)", "receiver.switchesPerIteration",
                        new PointPairs("variant", "event-outside-lock", "event-inside-lock")) { Cite =
                            ["volPerThread"] },
                    new DominanceRule(
                        "SR2", "receiver gets ≥ 3× more iterations with the event set outside the lock", "receiveCount",
                        new PointPairs("variant", "event-inside-lock", "event-outside-lock")) { Factor = 3 },
                    // Congestion overall: the whole process's switches (getrusage RUSAGE_SELF).
                    new DominanceRule(
                        "SR3", "lock-free: ≥ 10× fewer context switches than event-inside-lock (process total)",
                        "switches", new PointPairs("variant", "lock-free", "event-inside-lock")) { Factor = 10 },
                    new DominanceRule(
                        "SR4", "receiver-only lock: receives not lower than lock-free (within 20 %)", "receiveCount",
                        new PointPairs("variant", "receiver-only-lock", "lock-free"),
                        Expectation.NotLower) { Tolerance = 0.2 },
                    new DominanceRule("SR4", "receiver-only lock: ≥ 10× fewer context switches than event-inside-lock "
                        + "(process total)", "switches",
                            new PointPairs("variant", "receiver-only-lock", "event-inside-lock")) { Factor = 10 },
                ],
            },
            new()
            {
                Name = "tp1", Workload = "thrdperf", Claims = ["TP1"],
                Title = "CPU-bound, serial vs concurrent, pinned to CPU 0, 2..16 computations",
                Base = P(("kind", "cpu"), ("affinity", "0"), ("bias", "10"), ("order", "descending")),
                XParameter = "computations", XValues = ["2", "4", "8", "12", "16"], XLabel =
                    "computations (k-th lasts k × bias ms)",
                Series = SweepSeries.Grid(("mode", ["serial", "concurrent"])),
                Verdicts =
                [
                    new DominanceRule(
                        "TP1", "concurrent not faster than serial on one CPU (3 % tolerance)", "elapsed",
                        new PointPairs("mode", "concurrent", "serial"), Expectation.NotLower) { Cite =
                        ["involPerThread"] },
                ],
            },
            new()
            {
                Name = "tp2", Workload = "thrdperf", Claims = ["TP2"],
                Title = "I/O-bound (sleep), serial vs concurrent, 2..17 computations",
                Base = P(("kind", "io"), ("bias", "10"), ("order", "descending")),
                XParameter = "computations", XValues = Enumerable.Range(2, 16).Select(I).ToList(), XLabel =
                    "computations (k-th sleeps k × bias ms)",
                Series = SweepSeries.Grid(("mode", ["serial", "concurrent"])),
                Verdicts =
                [
                    new DominanceRule("TP2", "concurrent faster than serial", "elapsed",
                        new PointPairs("mode", "concurrent", "serial")),
                    new GrowthExponentRule("TP2",
                        "serial elapsed grows like the sum 1..N, concurrent linearly (log-log exponents)", "elapsed",
                        new PointPairs("mode", "serial", "concurrent"), "computations", GrowthModel.SumOneToN,
                            GrowthModel.Longest),
                ],
            },
            new()
            {
                Name = "tp3", Workload = "thrdperf", Claims = ["TP3"],
                Title = "CPU-bound, longest first: average response ratio, serial vs concurrent",
                Base = P(("kind", "cpu"), ("bias", "20"), ("order", "descending")),
                XParameter = "computations", XValues = ["2", "4", "8", "12", "16"], XLabel =
                    "computations (k-th lasts k × bias ms)",
                Series = SweepSeries.Grid(("mode", ["serial", "concurrent"])),
                PlotMetrics = ["averageResponse", "elapsed"],
                Verdicts =
                [
                    new DominanceRule("TP3", "concurrent improves the average response ratio", "averageResponse",
                        new PointPairs("mode", "concurrent", "serial")),
                ],
            },
        ];
    }

    private static string I(int v) => v.ToString(CultureInfo.InvariantCulture);

    private static Dictionary<string, string> P(params (string Key, string Value)[] values) =>
        values.ToDictionary(v => v.Key, v => v.Value, StringComparer.OrdinalIgnoreCase);
}
