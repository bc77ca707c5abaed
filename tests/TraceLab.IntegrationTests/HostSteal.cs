using TraceLab.Sweeps.Claims;

namespace TraceLab.IntegrationTests;

/// <summary>
/// The time the hypervisor took this machine's vCPUs away (steal): inside the intervals a trace measures, never
/// charged to a task, so it is what a traced run time may exceed getrusage by (docs/testing.md#rusage-steal-allowance).
/// </summary>
internal static class HostSteal
{
    /// <summary>All CPUs' steal time so far (<see cref="MachineLoad.ReadStealTicks"/>); 0 where unknown.</summary>
    public static long TotalNs() =>
        (long)((MachineLoad.ReadStealTicks() ?? 0) * (1e9 / MachineLoad.TicksPerSecond));
}
