using TraceLab.Capture.Windows;
using TraceLab.Core;
using TraceLab.Formats.Registry;

namespace TraceLab.Cli;

/// <summary>
/// ETW .etl through TraceEvent (<see cref="EtlTraceReader"/>), which needs Windows: off Windows, opening one says
/// so in one line. Recognised by content, like every format.
/// </summary>
internal sealed class TraceEventEtlFormat : ITraceFormat
{
    public string Name => "etl";
    public string Signature => EtlSignature.Description;

    public bool Matches(ReadOnlySpan<byte> head) => EtlSignature.Matches(head);

    /// <remarks>TraceEvent has no salvage mode: it reads what ETW's own parser accepts.</remarks>
    public IKernelTraceReader Open(string path, TraceReadOptions options) => EtlTraceReader.Open(path);
}
