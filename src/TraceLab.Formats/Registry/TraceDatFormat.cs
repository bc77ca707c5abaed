using TraceLab.Core;
using TraceLab.Formats.StackJoin;
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

    /// <summary>
    /// Opens the trace; with its stack recording beside it (<see cref="StackFile.PathFor"/>, written by
    /// <c>tracelab trace --stacks</c>), joined with it.
    /// </summary>
    public IKernelTraceReader Open(string path, TraceReadOptions options)
    {
        var reader = TraceDatReader.Open(path, options);
        var stacks = StackFile.PathFor(path);
        if (!options.JoinStackFile || !File.Exists(stacks)) return reader;
        try
        {
            return StackJoinedReader.Open(reader, stacks, options);
        }
        catch
        {
            reader.Dispose();
            throw;
        }
    }
}
