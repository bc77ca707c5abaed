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

    public static WorkloadResult Parse(string json, string source)
    {
        try
        {
            return JsonSerializer.Deserialize<WorkloadResult>(json) ?? throw new WorkloadException($"{source}: empty workload result");
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
}

public sealed class WorkloadObject
{
    [JsonPropertyName("name")] public string Name { get; set; } = "";
    [JsonPropertyName("kind")] public string Kind { get; set; } = "";
    [JsonPropertyName("address")] public string? Address { get; set; }
    [JsonPropertyName("id")] public long? Id { get; set; }
    [JsonPropertyName("fd")] public int? Fd { get; set; }
}
