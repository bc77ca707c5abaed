using TraceLab.Core;
using TraceLab.Formats.PerfData;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Formats.Registry;

/// <summary>perf record's perf.data: starts with "PERFILE2".</summary>
public sealed class PerfDataFormat : ITraceFormat
{
    public string Name => "perf.data";
    public string Signature => "magic PERFILE2";

    public bool Matches(ReadOnlySpan<byte> head) => head.StartsWith("PERFILE2"u8);

    public IKernelTraceReader Open(string path, TraceReadOptions options) =>
        PerfDataReader.Open(path, options);
}
