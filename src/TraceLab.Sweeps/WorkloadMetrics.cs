using System.Text.Json;

namespace TraceLab.Sweeps;

/// <summary>
/// The workload-specific numbers of a result file: its generic "metrics" object (every number in it), plus
/// per-thread iteration counts "thread{index}.iterations" for workloads with at most <see cref="MaxThreadColumns"/>
/// threads (sendrecv's receiver and senders) and their sum "iterations". Read from the JSON text so results
/// written before the "metrics" object existed still load.
/// </summary>
public static class WorkloadMetrics
{
    public const int MaxThreadColumns = 8;

    public static Dictionary<string, double> Read(string json)
    {
        var m = new Dictionary<string, double>();
        using var doc = JsonDocument.Parse(json);
        var root = doc.RootElement;
        if (root.TryGetProperty("metrics", out var metrics) && metrics.ValueKind == JsonValueKind.Object)
            foreach (var p in metrics.EnumerateObject())
                if (p.Value.ValueKind == JsonValueKind.Number) m[p.Name] = p.Value.GetDouble();
        if (root.TryGetProperty("threads", out var threads) && threads.ValueKind == JsonValueKind.Array)
        {
            var list = threads.EnumerateArray().ToList();
            double total = 0;
            foreach (var t in list)
            {
                if (!t.TryGetProperty("iterations", out var it) || it.ValueKind != JsonValueKind.Number) continue;
                total += it.GetDouble();
                if (list.Count <= MaxThreadColumns && t.TryGetProperty("index", out var idx) && idx.ValueKind == JsonValueKind.Number)
                    m[$"thread{idx.GetInt32()}.iterations"] = it.GetDouble();
            }
            m["iterations"] = total;
        }
        return m;
    }
}
