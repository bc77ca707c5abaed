using System.Text.Json;

namespace TraceLab.Sweeps.Claims;

/// <summary>
/// claims-run.json in a claims results folder: the machine and, per sweep and per session of `claims --run`, how
/// long it ran and how loaded the machine was. Rewritten atomically after every sweep session.
/// </summary>
public sealed class ClaimsRunLog
{
    public const string FileName = "claims-run.json";

    public int Version { get; set; } = 1;
    public bool Quick { get; set; }
    public MachineInfo? Machine { get; set; }
    public List<LoadWindow> Windows { get; set; } = [];

    public static ClaimsRunLog Load(string directory)
    {
        var path = Path.Combine(directory, FileName);
        if (!File.Exists(path)) return new ClaimsRunLog();
        try
        {
            var log = JsonSerializer.Deserialize(File.ReadAllText(path), SweepJsonContext.Default.ClaimsRunLog)
                ?? throw new SweepException($"{path} is empty");
            if (log.Windows is null || log.Windows.Any(w => w is null || w.Sweep is null || w.LoadAverages is null))
                throw new SweepException($"{path} is damaged: a load window is incomplete");
            return log;
        }
        catch (JsonException ex)
        {
            throw new SweepException($"{path} is not a valid claims run log ({ex.Message})");
        }
    }

    public void Save(string directory)
    {
        var final = Path.Combine(directory, FileName);
        var tmp = final + ".tmp";
        using (var fs = new FileStream(tmp, FileMode.Create, FileAccess.Write, FileShare.None))
        {
            JsonSerializer.Serialize(fs, this, SweepJsonContext.Default.ClaimsRunLog);
            fs.Flush(flushToDisk: true);
        }
        File.Move(tmp, final, overwrite: true);
    }

    /// <summary>Other processes' share of the CPUs over the sweep's windows, or null when never measured.</summary>
    public double? ForeignShare(string sweep)
    {
        var w = Windows.Where(x => x.Sweep == sweep && x.TotalTicks > 0).ToList();
        if (w.Count == 0) return null;
        return MachineLoad.ForeignShare(w.Sum(x => x.BusyTicks), w.Sum(x => x.TotalTicks), w.Sum(x => x.OwnCpuNs));
    }

    public IReadOnlyList<double> LoadAverages(string sweep) =>
        Windows.Where(x => x.Sweep == sweep).SelectMany(x => x.LoadAverages).ToList();

    public IReadOnlyList<double> LoadAverages() => Windows.SelectMany(x => x.LoadAverages).ToList();
}

/// <summary>One uninterrupted stretch of one sweep in one `claims --run` session.</summary>
public sealed class LoadWindow
{
    public string Sweep { get; set; } = "";
    public DateTimeOffset StartedUtc { get; set; }
    public DateTimeOffset FinishedUtc { get; set; }
    /// <summary>Runs recorded in this window (calibration pilots not counted).</summary>
    public int Runs { get; set; }
    /// <summary>Machine-wide busy and total CPU ticks over the window (/proc/stat, all CPUs).</summary>
    public long BusyTicks { get; set; }
    public long TotalTicks { get; set; }
    /// <summary>User + system time of the workload runs recorded in the window (their getrusage), ns.</summary>
    public long OwnCpuNs { get; set; }
    /// <summary>1-minute load averages sampled about every 10 s (they include the workload's own threads).</summary>
    public List<double> LoadAverages { get; set; } = [];
    public bool Interrupted { get; set; }
}
