using TraceLab.Analyzers.Findings;

namespace TraceLab.Reporting.Findings;

/// <summary>
/// Runs every rule over a finished report and keeps the findings at or above <see cref="SeverityFloor"/>, worst
/// first (docs/metrics.md, "Findings"). A post-pass: it reads only the report and the findings evidence.
/// </summary>
public static class FindingEngine
{
    /// <summary>No finding explaining less than 5 % of the reported threads' time is raised.</summary>
    public const double SeverityFloor = 0.05;

    /// <summary>The catalog, in the order ties are listed.</summary>
    public static readonly IReadOnlyList<IFindingRule> Rules =
    [
        new YieldWhileHoldingRule(),
        new LockConvoyRule(),
        new KernelLockRule(),
        new WakeWhileHoldingRule(),
        new SerializationRule(),
        new OversubscriptionRule(),
        new CpuContentionRule(),
        new CrossCpuWakeupRule(),
        new PriorityPreemptionRule(),
    ];

    public static List<FindingSection> Run(RunReport report, FindingEvidence? evidence,
        IEnumerable<IFindingRule>? rules = null)
    {
        var context = new FindingContext(report, evidence);
        if (context.ThreadTimeNs <= 0) return [];
        var all = (rules ?? Rules).ToList();
        return all
            .SelectMany((rule, order) => rule.Evaluate(context).Select(f => (Finding: f, Order: order)))
            .Where(x => x.Finding.Severity >= SeverityFloor)
            .OrderByDescending(x => x.Finding.Severity).ThenBy(x => x.Order)
            .ThenBy(x => x.Finding.Title, StringComparer.Ordinal)
            .Select(x => x.Finding)
            .ToList();
    }

    /// <summary>Severity as reported: 0..1, 4 decimals.</summary>
    public static double Round(double severity) => Math.Round(Math.Clamp(severity, 0, 1), 4);
}
