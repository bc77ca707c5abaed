using TraceLab.Core;

namespace TraceLab.Export.Perfetto;

/// <summary>`--to perfetto`: <see cref="PerfettoExporter"/> behind the exporter seam.</summary>
public sealed class PerfettoTraceExporter : ITraceExporter
{
    public string Name => "perfetto";
    public string Extension => ".pftrace";
    public string Description => "Perfetto protobuf trace with convoy and wakeup tracks (ui.perfetto.dev)";

    public IExportSummary Export(IKernelTraceReader reader, Stream output, ExportOptions options,
        CancellationToken cancellationToken = default) =>
        PerfettoExporter.Export(reader, output, options.Pid, options.Annotator, options.Demangle, cancellationToken);
}
