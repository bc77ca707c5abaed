using TraceLab.Core;

namespace TraceLab.Export;

/// <summary>
/// One output format of `tracelab export --to NAME`: writes a trace, with TraceLab's analysis, for another viewer.
/// Exporters are listed once, in <see cref="TraceExporters.All"/>.
/// </summary>
public interface ITraceExporter
{
    /// <summary>The <c>--to</c> value, lower case, e.g. "perfetto".</summary>
    string Name { get; }

    /// <summary>The output's file name extension, with the dot (default output: the trace's name with it).</summary>
    string Extension { get; }

    /// <summary>One phrase for help texts, e.g. "Perfetto protobuf trace (ui.perfetto.dev)".</summary>
    string Description { get; }

    /// <summary>Streams <paramref name="reader"/>'s events once, writing to <paramref name="output"/>.</summary>
    IExportSummary Export(IKernelTraceReader reader, Stream output, ExportOptions options,
        CancellationToken cancellationToken = default);
}

/// <summary>What an export wrote, as the lines the command prints.</summary>
public interface IExportSummary
{
    /// <summary>The first line says what <paramref name="file"/> holds; further lines are hints (how to open it).
    /// </summary>
    IReadOnlyList<string> Lines(ExportedFile file);
}

/// <summary>Choices every exporter is given; an exporter ignores those it has no use for.</summary>
public sealed record ExportOptions
{
    public static ExportOptions Default { get; } = new();

    /// <summary>The process whose threads and objects get tracks; null: the workload's (from its markers).</summary>
    public int? Pid { get; init; }

    /// <summary>Labelled slices to add (the findings' windows); null: none.</summary>
    public IExportAnnotator? Annotator { get; init; }

    /// <summary>
    /// C++ names in stacks demangled as perf script prints them; false: as linked (`--no-demangle`, as
    /// perf script --no-demangle). docs/formats.md#demangling.
    /// </summary>
    public bool Demangle { get; init; } = true;
}

/// <summary>The written export file, for the summary lines.</summary>
public readonly record struct ExportedFile(string Path, long Bytes, TimeSpan Elapsed);
