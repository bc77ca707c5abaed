using System.Text.Json;

namespace TraceLab.Sweeps;

/// <summary>
/// The workload-specific numbers of a result file: its generic "metrics" object (every number in it), plus
/// per-thread iteration counts "thread{index}.iterations" for workloads with at most <see cref="MaxThreadColumns"/>
/// threads (sendrecv's receiver and senders), their sum "iterations", and per-role sums (<see cref="AddRoles"/>). Read
/// from the JSON text so results written before the "metrics" object existed still load.
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
                if (list.Count <= MaxThreadColumns && t.TryGetProperty("index", out var idx)
                    && idx.ValueKind == JsonValueKind.Number)
                    m[$"thread{idx.GetInt32()}.iterations"] = it.GetDouble();
            }
            m["iterations"] = total;
            AddRoles(m, list);
        }
        return m;
    }

    /// <summary>
    /// Per-role sums when the threads have more than one role (sendrecv's "receiver" and "sender 0..2"): the role
    /// without its trailing index names the group; "{role}.vol", ".invol", ".switches" (vol + invol, the thread's own
    /// getrusage), ".iterations" and ".switchesPerIteration" sum over the group's threads. A group with a thread whose
    /// counts are unavailable (-1) gets no switch figures.
    /// </summary>
    private static void AddRoles(Dictionary<string, double> m, List<JsonElement> threads)
    {
        var groups = threads
            .Where(t => t.TryGetProperty("role", out var r) && r.ValueKind == JsonValueKind.String)
            .GroupBy(t => RoleGroup(t.GetProperty("role").GetString()!))
            .ToList();
        if (groups.Count < 2) return;
        foreach (var g in groups)
        {
            double vol = 0, invol = 0, iterations = 0;
            var known = true;
            foreach (var t in g)
            {
                var v = Number(t, "voluntarySwitches");
                var i = Number(t, "involuntarySwitches");
                if (v is null or < 0 || i is null or < 0) known = false;
                else
                {
                    vol += v.Value;
                    invol += i.Value;
                }
                iterations += Number(t, "iterations") ?? 0;
            }
            m[$"{g.Key}.iterations"] = iterations;
            if (!known) continue;
            m[$"{g.Key}.vol"] = vol;
            m[$"{g.Key}.invol"] = invol;
            m[$"{g.Key}.switches"] = vol + invol;
            if (iterations > 0) m[$"{g.Key}.switchesPerIteration"] = (vol + invol) / iterations;
        }
    }

    /// <summary>"sender 2" → "sender"; "receiver" → "receiver".</summary>
    public static string RoleGroup(string role)
    {
        var r = role.Trim();
        var cut = r.Length;
        while (cut > 0 && char.IsAsciiDigit(r[cut - 1])) cut--;
        return (cut < r.Length ? r[..cut] : r).Trim() is { Length: > 0 } g ? g.Replace(' ', '-') : r;
    }

    private static double? Number(JsonElement e, string name) =>
        e.TryGetProperty(name, out var v) && v.ValueKind == JsonValueKind.Number ? v.GetDouble() : null;
}
