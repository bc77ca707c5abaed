namespace TraceLab.Sweeps.Claims;

/// <summary>
/// One seed claim (docs/claims.md) as the claims report needs it: what it says, which predefined sweep judges it,
/// and what the machine must offer for that sweep's verdict to decide it.
/// </summary>
/// <param name="MinCpus">Fewest CPUs on which the sweep separates the claim's effect from having too few CPUs.</param>
/// <param name="NeedsIdleCpus">
/// The effect lives in threads running on several CPUs at once (SMP, "M active threads"): other load on the
/// machine takes those CPUs away, so the verdict counts only when the others left the CPUs mostly idle.
/// </param>
/// <param name="LargerMachine">What a machine with more CPUs would have to show to decide (or confirm) it.</param>
public sealed record SeedClaim(string Id, string Seed, string Text, string Workload, string Sweep, int MinCpus,
    bool NeedsIdleCpus, string? LargerMachine, string? WhyMinCpus = null);
