namespace TraceLab.Workloads;

/// <summary>Every workload TraceLab can build, run and trace.</summary>
public static class WorkloadCatalog
{
    public static IReadOnlyList<WorkloadDefinition> All { get; } = [TimeMutexWorkload.Definition,
        ThrottleWorkload.Definition, SendRecvWorkload.Definition, ThrdPerfWorkload.Definition];

    public static WorkloadDefinition? Find(string name) =>
        All.FirstOrDefault(w => string.Equals(w.Name, name, StringComparison.OrdinalIgnoreCase));
}
