using System.Text.Json.Serialization;
using TraceLab.Analyzers.Timeline;

namespace TraceLab.Reporting.Findings;

/// <summary>report.json "findings[]": one diagnosis, with the figures it rests on (docs/metrics.md,
/// "Findings").</summary>
public sealed class FindingSection
{
    /// <summary>Stable id of the rule that raised it (docs/metrics.md, "Findings").</summary>
    public required string Kind { get; init; }
    /// <summary>Share of the reported threads' time (run + ready + wait) the finding explains, 0..1.</summary>
    public double Severity { get; init; }
    public required string Title { get; init; }
    public List<FindingFigure> Evidence { get; init; } = [];
    public List<int> Threads { get; init; } = [];
    public List<string> Objects { get; init; } = [];
    /// <summary>
    /// The worst time windows, worst first, from the region's begin; report.json writes each as START:LENGTH in ms
    /// (the form --timeline-window takes, <see cref="TimelineWindowsJsonConverter"/>).
    /// </summary>
    [JsonConverter(typeof(TimelineWindowsJsonConverter))]
    public List<TimelineWindow> Windows { get; init; } = [];
    public required string Remedy { get; init; }
    /// <summary>The seed claims (docs/claims.md) the remedy rests on.</summary>
    public List<string> Claims { get; init; } = [];
    /// <summary>
    /// Where the finding's threads waited, when the trace has stacks: the named user frames of the heaviest off-CPU
    /// stack of their processes, innermost first (docs/metrics.md#finding-where); null otherwise.
    /// </summary>
    public string? Where { get; init; }
}

/// <summary>One figure a finding rests on: <see cref="Metric"/> is its name in docs/metrics.md.</summary>
public sealed class FindingFigure
{
    public required string Metric { get; init; }
    public double Value { get; init; }
}
