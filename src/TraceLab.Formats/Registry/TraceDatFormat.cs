using TraceLab.Core;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Formats.Registry;

/// <summary>trace-cmd's trace.dat: starts with 17 08 44 "tracing".</summary>
public sealed class TraceDatFormat : ITraceFormat
{
    // 17 08 44 (0x44 = 'D') then "tracing"; \u escapes take exactly four digits, so "D" is not read as hex.
    private static ReadOnlySpan<byte> Magic => "\u0017\u0008Dtracing"u8;

    public string Name => "trace.dat";
    public string Signature => "trace-cmd, magic 17 08 44 'tracing'";

    public bool Matches(ReadOnlySpan<byte> head) => head.StartsWith(Magic);

    public IKernelTraceReader Open(string path, TraceReadOptions options) =>
        TraceDatReader.Open(
            path, new TraceDatReadOptions { Salvage = options.Salvage, BufferName = options.BufferName });
}
