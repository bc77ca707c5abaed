using TraceLab.Core;
using TraceLab.Export.Folded;
using TraceLab.Export.Perfetto;
using TraceLab.Formats.PerfData;
using TraceLab.Formats.Symbols;

namespace TraceLab.Export;

/// <summary>
/// The export formats `tracelab export --to` offers. To add one, add its entry here (docs/architecture.md).
/// </summary>
public static class TraceExporters
{
    public static IReadOnlyList<ITraceExporter> All { get; } =
    [
        new PerfettoTraceExporter(),
        new FoldedStacksExporter { Symbolizer = ThisMachine },
        new OffWakeStacksExporter { Symbolizer = ThisMachine },
    ];

    /// <summary>Symbols from this machine's binaries, debug files and running kernel.</summary>
    private static StackSymbolizer ThisMachine(IStackTraceReader r) =>
        new(r.Maps, (r as PerfDataReader)?.RecordedBuildIds,
            new SymbolOptions { KernelSymbols = SymbolOptions.RunningKernel(r.Info.KernelRelease) });

    public static IEnumerable<string> Names => All.Select(e => e.Name);

    /// <summary>The exporter called <paramref name="name"/> (any case), or null.</summary>
    public static ITraceExporter? Find(string name) =>
        All.FirstOrDefault(e => string.Equals(e.Name, name, StringComparison.OrdinalIgnoreCase));
}
