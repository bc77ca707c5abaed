namespace TraceLab.Reporting.Findings;

/// <summary>One of a finding's worst windows in trace time: where a viewer should look.</summary>
/// <param name="Rank">The finding's place in the report, from 1.</param>
/// <param name="Finding">The finding.</param>
/// <param name="StartNs">Trace timestamp where the window starts.</param>
/// <param name="EndNs">Where it ends, never past the region's end.</param>
public sealed record FindingWindow(int Rank, FindingSection Finding, long StartNs, long EndNs)
{
    /// <summary>Every window of every finding of <paramref name="report"/>, in report order.</summary>
    public static IReadOnlyList<FindingWindow> Of(RunReport report)
    {
        var windows = new List<FindingWindow>();
        var findings = report.Findings ?? [];
        for (var i = 0; i < findings.Count; i++)
        {
            foreach (var w in findings[i].Windows)
            {
                var start = report.Region.BeginNs + w.StartOffsetNs;
                windows.Add(
                    new FindingWindow(i + 1, findings[i], start, Math.Min(report.Region.EndNs, start + w.LengthNs)));
            }
        }
        return windows;
    }
}
