using System.Buffers.Binary;
using Microsoft.Win32.SafeHandles;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Formats.Tests.TraceDatV7;

/// <summary>
/// Counts a trace.dat's records per event name straight from the ring-buffer pages (the common_type id of every
/// record, named through the file's formats), bypassing the decoder and the merge: a check on what the reader delivers.
/// </summary>
internal static class RawEventCounter
{
    public static Dictionary<string, long> Count(string path, string buffer = "")
    {
        using var handle = File.OpenHandle(path);
        var meta = TraceDatMetadataParser.Parse(new BoundedFileReader(handle, path));
        var names = new Dictionary<int, string>();
        foreach (var f in meta.Formats) names[f.Id] = f.Name;
        var counts = new Dictionary<string, long>(StringComparer.Ordinal);
        var ranges = meta.Data.Where(r => r.Buffer == buffer && r.Size > 0).ToList();
        using var data = TraceDatData.Open(handle, path, ranges.Count);
        using var codec = ChunkCodec.For(meta.Compression, path, 0);
        var scratch = new ChunkScratch();
        foreach (var range in ranges)
        {
            var stream = range.Compressed ? new CompressedCpuStream(handle, path, codec!, scratch, range) : null;
            using var cursor = new CpuCursor(data, path, meta.HeaderPage!, range, stream);
            while (cursor.MoveNext())
            {
                var id = BinaryPrimitives.ReadUInt16LittleEndian(cursor.Payload);
                var name = names.TryGetValue(id, out var n) ? n : $"id {id}";
                counts[name] = counts.GetValueOrDefault(name) + 1;
            }
        }

        return counts;
    }
}
