using System.Text.Json.Serialization;

namespace TraceLab.Sweeps;

/// <summary>
/// The outcome of one run of one point: the workload's own measurements, and the trace's when traced.
/// </summary>
public sealed class SweepRunRecord
{
    public int Point { get; set; }
    public int Repeat { get; set; }
    /// <summary>"ok" or "failed".</summary>
    public string Status { get; set; } = "ok";
    public string? Error { get; set; }
    /// <summary>Position in the execution order (0-based), so the CSV shows the interleaving.</summary>
    public int Sequence { get; set; }
    public DateTimeOffset StartedUtc { get; set; }
    public long ElapsedNs { get; set; }
    public long UserNs { get; set; }
    public long SystemNs { get; set; }
    public long VoluntarySwitches { get; set; }
    public long InvoluntarySwitches { get; set; }
    /// <summary>The workload result's generic metrics (e.g. throttle sum, sendrecv receiveCount).</summary>
    public Dictionary<string, double> Metrics { get; set; } = [];
    /// <summary>Metrics from the run's report.json when traced (names in <see cref="TracedMetrics"/>).</summary>
    public Dictionary<string, double> Traced { get; set; } = [];
    /// <summary>
    /// Run folder relative to the sweep directory (workload.json, log; trace.dat and report.json when traced).
    /// </summary>
    public string? Directory { get; set; }

    [JsonIgnore] public bool Ok => Status == "ok";

    public static SweepRunRecord Failed(int point, int repeat, string error) =>
        new() { Point = point, Repeat = repeat, Status = "failed", Error = error };
}
