namespace TraceLab.Reporting.Findings;

/// <summary>
/// One kind of finding: reads what the analyses computed (<see cref="FindingContext"/>) and raises zero or more
/// findings. Rules do not filter by the severity floor; <see cref="FindingEngine"/> does.
/// </summary>
public interface IFindingRule
{
    /// <summary>The stable id of the findings it raises (docs/metrics.md, "Findings").</summary>
    string Kind { get; }

    IEnumerable<FindingSection> Evaluate(FindingContext context);
}
