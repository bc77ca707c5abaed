using TraceLab.Core;
using TraceLab.Formats.Registry;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Formats.Etl;

/// <summary>
/// An .etl inside a zip archive, as PerfView saves its traces (.etl.zip: the merged .etl, sometimes with symbol
/// files beside it). The .etl is copied out to a temporary file (the reader needs random access, which a deflate stream
/// does not give), read from there, and the copy deleted: at once where the OS lets an open file be deleted (Linux),
/// else when the reader is disposed.
/// </summary>
public sealed class EtlZipFormat : ITraceFormat
{
    /// <summary>A zip local file header: "PK\x03\x04".</summary>
    private static ReadOnlySpan<byte> LocalHeader => "PK\x03\x04"u8;

    public string Name => "etl.zip";

    public string Signature => "a zip archive (PK 03 04) holding one .etl, as PerfView writes";

    public bool Matches(ReadOnlySpan<byte> head) => head.StartsWith(LocalHeader);

    public IKernelTraceReader Open(string path, TraceReadOptions options)
    {
        var copy = EtlZipCopy.Extract(path);
        try
        {
            var handle = File.OpenHandle(copy.File, FileMode.Open, FileAccess.Read, FileShare.Read | FileShare.Delete,
                FileOptions.RandomAccess);
            var reader = EtlFileReader.Open(handle, $"{path}:{copy.EntryName}",
                options);
            return new ExtractedTraceReader(reader, copy);
        }
        catch
        {
            copy.Dispose();
            throw;
        }
    }
}
