namespace TraceLab.Workloads;

/// <summary>
/// Send/receive (seed 003): sender threads publish to one receiver through a lock and an auto-reset event.
/// </summary>
public static class SendRecvWorkload
{
    public static readonly IReadOnlyDictionary<string, long> Variants =
        new Dictionary<string, long>(StringComparer.OrdinalIgnoreCase)
        {
            ["event-inside-lock"] = 1,
            ["event-outside-lock"] = 2,
            ["lock-free"] = 3,
            ["receiver-only-lock"] = 4,
        };

    public static WorkloadDefinition Definition { get; } = new()
    {
        Name = "sendrecv",
        Seed = "003",
        Description = "Senders lock shared data and set an event; one receiver waits for it, locks and consumes",
        Parameters =
        [
            new("variant", "1 event-inside-lock, 2 event-outside-lock, 3 lock-free (interlocked), 4 receiver-only-lock",
                1, 4, 1) { Names = Variants },
            new("senders", "sender threads (one receiver)", 1, 16, 3),
            new("duration-ms", "how long the threads run (the seed: 60,000)", 1, 3_600_000, 5000),
            WorkloadParameters.Affinity(),
            WorkloadParameters.Priority(),
        ],
        Scenarios =
        [
            new("event-inside-lock", "3 senders set the event while holding the lock: the woken receiver blocks on it",
                ["SR1"], P(("variant", "event-inside-lock"), ("duration-ms", "2000"))),
            new("event-outside-lock", "3 senders set the event after leaving the lock", ["SR2"],
                P(("variant", "event-outside-lock"), ("duration-ms", "2000"))),
            new("lock-free", "no lock: interlocked add and exchange", ["SR3"],
                P(("variant", "lock-free"), ("duration-ms", "2000"))),
            new("receiver-only-lock", "senders interlocked; only the receiver takes the (never contended) lock",
                ["SR4"], P(("variant", "receiver-only-lock"), ("duration-ms", "2000"))),
        ],
        Arguments = v =>
        [
            "--variant", v["variant"], "--senders", v["senders"], "--duration-ms", v["duration-ms"],
            "--affinity", v["affinity"], "--priority", v["priority"],
        ],
    };

    private static Dictionary<string, string> P(params (string Key, string Value)[] values) =>
        WorkloadParameters.Values(values);
}
