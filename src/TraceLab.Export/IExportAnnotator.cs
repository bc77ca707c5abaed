using TraceLab.Analyzers;
using TraceLab.Reporting;

namespace TraceLab.Export;

/// <summary>
/// Adds TraceLab's conclusions to an export as labelled time slices on a track of their own (the findings' worst
/// windows, docs/metrics.md "Findings"), taken from the report of the export's own pass (the pipeline's).
/// </summary>
public interface IExportAnnotator
{
    /// <summary>The analyses the pass must run for <see cref="Slices"/>.</summary>
    AnalysisSelection Selection { get; }

    /// <summary>The slices, from the report built once the pass is complete.</summary>
    IReadOnlyList<ExportSlice> Slices(RunReport report);
}

/// <summary>
/// One labelled interval [<paramref name="Start"/>, <paramref name="End"/>] on the trace clock, on the track named
/// <paramref name="Track"/> (one track per name, so that slices of different tracks may overlap).
/// </summary>
public readonly record struct ExportSlice(string Track, long Start, long End, string Name);
