using System.Buffers.Binary;

namespace TraceLab.Formats.Tests.Fuzz;

/// <summary>
/// A small valid trace cut from a real capture: its metadata unchanged and the first pages of every CPU, with the
/// flyrecord table rewritten to point at them, so thousands of variants stay cheap to read.
/// </summary>
internal static class FuzzBaseTrace
{
    public static byte[] Build(byte[] sample, int pagesPerCpu)
    {
        var layout = TraceDatLayout.Parse(sample);
        var page = layout.PageSize;
        var dataStart = (layout.MetadataEnd + page - 1) / page * page;
        var kept = layout.Cpus.Select(c => (int)Math.Min(c.Size, (long)pagesPerCpu * page)).ToArray();
        var result = new byte[dataStart + kept.Sum()];
        sample.AsSpan(0, layout.MetadataEnd).CopyTo(result);
        var at = dataStart;
        foreach (var cpu in layout.Cpus)
        {
            var size = kept[cpu.Cpu];
            BinaryPrimitives.WriteUInt64LittleEndian(result.AsSpan(cpu.EntryOffset), (ulong)at);
            BinaryPrimitives.WriteUInt64LittleEndian(result.AsSpan(cpu.EntryOffset + 8), (ulong)size);
            sample.AsSpan((int)cpu.Offset, size).CopyTo(result.AsSpan(at));
            at += size;
        }

        return result;
    }
}
