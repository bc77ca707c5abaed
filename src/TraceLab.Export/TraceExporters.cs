using TraceLab.Export.Folded;
using TraceLab.Export.Perfetto;

namespace TraceLab.Export;

/// <summary>
/// The export formats `tracelab export --to` offers. To add one, add its entry here (docs/architecture.md).
/// </summary>
public static class TraceExporters
{
    public static IReadOnlyList<ITraceExporter> All { get; } =
    [
        new PerfettoTraceExporter(),
        new FoldedStacksExporter(),
        new OffWakeStacksExporter(),
    ];

    public static IEnumerable<string> Names => All.Select(e => e.Name);

    /// <summary>The exporter called <paramref name="name"/> (any case), or null.</summary>
    public static ITraceExporter? Find(string name) =>
        All.FirstOrDefault(e => string.Equals(e.Name, name, StringComparison.OrdinalIgnoreCase));
}
