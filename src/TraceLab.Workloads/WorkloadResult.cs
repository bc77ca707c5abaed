using System.Text.Json;
using System.Text.Json.Serialization;

namespace TraceLab.Workloads;

/// <summary>The machine-readable result a native workload writes at exit (native-workloads/README.md).</summary>
public sealed class WorkloadResult
{
    [JsonPropertyName("workload")] public string Workload { get; set; } = "";
    [JsonPropertyName("pid")] public int Pid { get; set; }
    [JsonPropertyName("params")] public JsonElement Params { get; set; }
    [JsonPropertyName("objects")] public List<WorkloadObject> Objects { get; set; } = [];
    [JsonPropertyName("beginNs")] public long BeginNs { get; set; }
    [JsonPropertyName("endNs")] public long EndNs { get; set; }
    [JsonPropertyName("elapsedNs")] public long ElapsedNs { get; set; }
    [JsonPropertyName("process")] public ProcessTimes Process { get; set; } = new();
    [JsonPropertyName("sharedCounter")] public long SharedCounter { get; set; }
    [JsonPropertyName("expectedCounter")] public long? ExpectedCounter { get; set; }
    [JsonPropertyName("threads")] public List<WorkloadThread> Threads { get; set; } = [];

    /// <summary>
    /// Workload-specific numbers (throttle's sum check, sendrecv's counts, thrdperf's response), by name.
    /// </summary>
    [JsonPropertyName("metrics")] public Dictionary<string, double> Metrics { get; set; } = [];

    /// <summary>thrdperf: one entry per computation, in start order; empty for other workloads.</summary>
    [JsonPropertyName("computations")] public List<WorkloadComputation> Computations { get; set; } = [];

    public static WorkloadResult Parse(string json, string source)
    {
        try
        {
            return JsonSerializer.Deserialize(json, WorkloadJsonContext.Default.WorkloadResult)
                ?? throw new WorkloadException($"{source}: empty workload result");
        }
        catch (JsonException ex)
        {
            throw new WorkloadException($"{source}: the workload result is not valid JSON ({ex.Message})");
        }
    }
}

public sealed class ProcessTimes
{
    [JsonPropertyName("userNs")] public long UserNs { get; set; }
    [JsonPropertyName("systemNs")] public long SystemNs { get; set; }
    [JsonPropertyName("voluntarySwitches")] public long VoluntarySwitches { get; set; }
    [JsonPropertyName("involuntarySwitches")] public long InvoluntarySwitches { get; set; }
}

public sealed class WorkloadThread
{
    [JsonPropertyName("index")] public int Index { get; set; }
    [JsonPropertyName("tid")] public int Tid { get; set; }
    [JsonPropertyName("userNs")] public long UserNs { get; set; }
    [JsonPropertyName("systemNs")] public long SystemNs { get; set; }
    [JsonPropertyName("voluntarySwitches")] public long VoluntarySwitches { get; set; }
    [JsonPropertyName("involuntarySwitches")] public long InvoluntarySwitches { get; set; }
    [JsonPropertyName("iterations")] public long Iterations { get; set; }

    /// <summary>
    /// What the thread does ("sender 0", "receiver", "computation 2"); null where all threads are alike.
    /// </summary>
    [JsonPropertyName("role")] public string? Role { get; set; }
}

/// <summary>
/// One thrdperf computation: its length and when it started and was terminated, relative to the test start.
/// </summary>
public sealed class WorkloadComputation
{
    [JsonPropertyName("index")] public int Index { get; set; }
    [JsonPropertyName("lengthMs")] public long LengthMs { get; set; }
    [JsonPropertyName("tid")] public int Tid { get; set; }
    [JsonPropertyName("startNs")] public long StartNs { get; set; }
    [JsonPropertyName("finishNs")] public long FinishNs { get; set; }
    [JsonPropertyName("turnaroundNs")] public long TurnaroundNs { get; set; }
    [JsonPropertyName("responseRatio")] public double ResponseRatio { get; set; }
    [JsonPropertyName("endOrder")] public int EndOrder { get; set; }
}

public sealed class WorkloadObject
{
    [JsonPropertyName("name")] public string Name { get; set; } = "";
    [JsonPropertyName("kind")] public string Kind { get; set; } = "";
    [JsonPropertyName("address")] public string? Address { get; set; }
    [JsonPropertyName("id")] public long? Id { get; set; }
    [JsonPropertyName("fd")] public int? Fd { get; set; }
}
