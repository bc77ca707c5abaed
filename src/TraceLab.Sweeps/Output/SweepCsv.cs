using System.Globalization;
using System.Text;

namespace TraceLab.Sweeps.Output;

/// <summary>sweep.csv: one row per run, in execution order (docs/sweeps.md).</summary>
public static class SweepCsv
{
    public static string Write(SweepData data)
    {
        var parameters = data.Points.SelectMany(p => p.Values.Keys).Distinct(StringComparer.OrdinalIgnoreCase).ToList();
        var metrics = data.Runs.SelectMany(r => r.Metrics.Keys).Distinct().Order(StringComparer.Ordinal).ToList();
        var traced = data.Runs.SelectMany(r => r.Traced.Keys).Distinct().Order(StringComparer.Ordinal).ToList();
        var sb = new StringBuilder();
        var header = new List<string> { "point", "series", "x", "repeat", "sequence", "status" };
        header.AddRange(parameters);
        header.AddRange(["elapsed_ns", "user_ns", "system_ns", "voluntary_switches", "involuntary_switches"]);
        header.AddRange(metrics.Select(m => "metric." + m));
        header.AddRange(traced.Select(m => "traced." + m));
        header.AddRange(["error", "directory"]);
        sb.AppendLine(string.Join(",", header.Select(Quote)));
        foreach (var r in data.Runs.OrderBy(r => r.Sequence))
        {
            var p = data.Points[r.Point];
            var row = new List<string> { p.Id, p.Series, p.X, I(r.Repeat), I(r.Sequence), r.Status };
            row.AddRange(parameters.Select(k => p.Values.TryGetValue(k, out var v) ? v : ""));
            row.AddRange(r.Ok
                ? [I(r.ElapsedNs), I(r.UserNs), I(r.SystemNs), I(r.VoluntarySwitches), I(r.InvoluntarySwitches)]
                : ["", "", "", "", ""]);
            row.AddRange(metrics.Select(m => r.Metrics.TryGetValue(m, out var v) ? D(v) : ""));
            row.AddRange(traced.Select(m => r.Traced.TryGetValue(m, out var v) ? D(v) : ""));
            row.Add(r.Error ?? "");
            row.Add(r.Directory ?? "");
            sb.AppendLine(string.Join(",", row.Select(Quote)));
        }
        return sb.ToString();
    }

    private static string I(long v) => v.ToString(CultureInfo.InvariantCulture);
    private static string D(double v) => v.ToString("R", CultureInfo.InvariantCulture);

    private static string Quote(string s) =>
        s.IndexOfAny([',', '"', '\n', '\r']) >= 0 ? "\"" + s.Replace("\"", "\"\"") + "\"" : s;
}
