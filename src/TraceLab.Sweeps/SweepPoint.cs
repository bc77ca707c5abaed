namespace TraceLab.Sweeps;

/// <summary>One (series, x value) combination with every workload parameter resolved.</summary>
public sealed record SweepPoint(int Index, string Series, string X, IReadOnlyDictionary<string, string> Values)
{
    /// <summary>Stable id used for run folders and the state file: p03.</summary>
    public string Id => $"p{Index:00}";
}

/// <summary>One scheduled execution: a point and a repeat number (0-based).</summary>
public sealed record PlannedRun(int Point, int Repeat)
{
    public string Id(IReadOnlyList<SweepPoint> points) => $"{points[Point].Id}-r{Repeat}";
}
