using TraceLab.Core;
using TraceLab.Formats.Registry;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Formats.Etl;

/// <summary>
/// ETW .etl read by TraceLab's own reader, on every OS (TraceEvent is used only for sessions and merging).
/// </summary>
public sealed class EtlFormat : ITraceFormat
{
    public string Name => "etl";
    public string Signature => EtlSignature.Description;

    public bool Matches(ReadOnlySpan<byte> head) => EtlFileReader.LooksLikeEtl(head);

    public IKernelTraceReader Open(string path, TraceReadOptions options) =>
        EtlFileReader.Open(path, options);
}
