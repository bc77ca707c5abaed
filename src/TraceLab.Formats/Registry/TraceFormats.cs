using TraceLab.Formats.Etl;
using TraceLab.Formats.PerfData;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Formats.Registry;

/// <summary>
/// The trace formats TraceLab reads on every OS. To add one, add its entry to the list (docs/architecture.md).
/// </summary>
public static class TraceFormats
{
    /// <summary>Sniffed in this order; the first match opens the file.</summary>
    public static TraceFormatRegistry All { get; } = new(
    [
        new TraceDatFormat(),
        new PerfDataFormat(),
        new EtlFormat(),
        new EtlZipFormat(),
    ]);
}
