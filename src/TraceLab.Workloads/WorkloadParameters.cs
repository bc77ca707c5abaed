namespace TraceLab.Workloads;

/// <summary>Parameters every workload shares, spelled and validated the same way everywhere.</summary>
public static class WorkloadParameters
{
    public static ParameterSpec Affinity() =>
        new("affinity", "CPUs the process may run on: all, or a list like 0 or 0-1", 0, 0,
            0)
        { TextValidator = CpuList.Validate, DefaultText = "all" };

    public static ParameterSpec Priority() =>
        new("priority", "nice level -20..19 (Windows: priority class)", -20, 19, 0);

    public static Dictionary<string, string> Values(params (string Key, string Value)[] values) =>
        values.ToDictionary(v => v.Key, v => v.Value, StringComparer.OrdinalIgnoreCase);
}
