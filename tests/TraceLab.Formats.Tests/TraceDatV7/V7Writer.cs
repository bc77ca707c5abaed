using System.Buffers.Binary;
using System.IO.Compression;
using System.Text;
using ZstdSharp;

namespace TraceLab.Formats.Tests.TraceDatV7;

/// <summary>Where a <see cref="V7Writer"/> put things: metadata up to <see cref="DataStart"/>, then CPU data.</summary>
internal sealed record V7Layout(
    int PageSize, int DataStart, List<(int Offset, int Size)> Cpus, List<(int Offset, string Name)> Fields);

/// <summary>
/// Rewrites a trace.dat v7 (any compression) with zlib, zstd or no compression, from the layout in
/// `man 5 trace-cmd.dat.v7` and trace-cmd's framing (sections: 4-byte compressed and decompressed sizes, then one
/// zlib stream or zstd frame; CPU data: a chunk count, then per chunk the two sizes and the data, 10 pages per
/// chunk). Unlike trace-cmd, it puts the one options section right after the header and the CPU data last, so a cut
/// file keeps its metadata. Test-only: it holds the whole file in memory.
/// </summary>
internal static class V7Writer
{
    private const int PagesPerChunk = 10;
    private static readonly ushort[] SectionOptions = [16, 17, 18, 19, 20, 21];

    /// <param name="maxPagesPerCpu">Keep only each CPU's first pages (a small base for fuzzing).</param>
    /// <param name="dropSymbols">Leave out the kallsyms and printk sections (the reader skips them anyway).</param>
    /// <param name="instance">Also write a trace instance of this name holding a copy of the first buffer's first
    /// CPU.</param>
    public static V7Layout Rewrite(string source, string target, string compression, int maxPagesPerCpu = int.MaxValue,
        bool dropSymbols = false, string? instance = null)
    {
        var src = File.ReadAllBytes(source);
        var (pageSize, sourceCompression, options) = ReadOptions(src);
        var sections = new Dictionary<ushort, byte[]>();
        var buffers = new List<(string Name, string Clock, List<(uint Cpu, byte[] Data)> Cpus)>();
        var other = new List<(ushort Id, byte[] Data)>();
        foreach (var (id, data) in options)
        {
            if (dropSymbols && id is 19 or 20) continue;
            if (SectionOptions.Contains(id)) sections[id] = SectionData(src, (long)U64(data, 0), sourceCompression);
            else if (id == 3) buffers.Add(Truncate(ReadBuffer(src, data, sourceCompression), maxPagesPerCpu, pageSize));
            else if (id != 0) other.Add((id, data));
        }

        if (instance is not null) buffers.Add((instance, buffers[0].Clock, [buffers[0].Cpus[0]]));

        var fields = new List<(int, string)>();
        var o = new MemoryStream();
        o.Write([0x17, 0x08, 0x44]);
        o.Write("tracing7\0"u8);
        o.WriteByte(0);
        o.WriteByte(8);
        WriteU32(o, (uint)pageSize);
        o.Write(Encoding.ASCII.GetBytes(compression == "none" ? "none\0\0" : $"{compression}\01\0"));
        fields.Add(((int)o.Position, "first options offset"));
        WriteU64(o, (ulong)o.Position + 8);

        // One options section; offsets in it are patched once the sections are placed.
        var optionsAt = (int)o.Position;
        var body = new MemoryStream();
        var patches = new List<(int At, Func<ulong> Value)>();
        var placed = new Dictionary<object, ulong>();
        foreach (var (id, data) in other) WriteOption(body, id, data);
        foreach (var id in sections.Keys)
        {
            WriteU16(body, id);
            WriteU32(body, 8);
            var key = (object)id;
            patches.Add(((int)body.Position, () => placed[key]));
            WriteU64(body, 0);
        }

        var bufferOptionData = new List<(int At, int Cpus)>();
        foreach (var b in buffers)
        {
            var opt = new MemoryStream();
            WriteU64(opt, 0);
            opt.Write(Encoding.ASCII.GetBytes(b.Name + "\0" + b.Clock + "\0"));
            WriteU32(opt, (uint)pageSize);
            WriteU32(opt, (uint)b.Cpus.Count);
            foreach (var (cpu, _) in b.Cpus) { WriteU32(opt, cpu); WriteU64(opt, 0); WriteU64(opt, 0); }
            WriteU16(body, 3);
            WriteU32(body, (uint)opt.Length);
            bufferOptionData.Add(((int)body.Position, b.Cpus.Count));
            body.Write(opt.ToArray());
        }

        WriteU16(body, 0);
        WriteU32(body, 8);
        WriteU64(body, 0);
        WriteSectionHeader(o, 0, 0, body.Length);
        var bodyAt = (int)o.Position;
        fields.Add((optionsAt, "options section header"));
        o.Write(body.ToArray());

        foreach (var (id, data) in sections)
        {
            placed[id] = (ulong)o.Position;
            fields.Add(((int)o.Position, $"section {id} header"));
            WriteSection(o, id, data, compression);
        }

        var cpus = new List<(int, int)>();
        for (var bi = 0; bi < buffers.Count; bi++)
        {
            var sectionAt = o.Position;
            fields.Add(((int)sectionAt, "buffer section header"));
            WriteSectionHeader(o, 3, compression == "none" ? (ushort)0 : (ushort)1, 0);
            Pad(o, pageSize);
            var (optAt, _) = bufferOptionData[bi];
            var bytes = o.GetBuffer();
            BinaryPrimitives.WriteUInt64LittleEndian(bytes.AsSpan(bodyAt + optAt), (ulong)sectionAt);
            var entry = bodyAt + optAt + 8
                + Encoding.ASCII.GetByteCount(buffers[bi].Name + "\0" + buffers[bi].Clock + "\0") + 8;
            for (var c = 0; c < buffers[bi].Cpus.Count; c++, entry += 20)
            {
                Pad(o, pageSize);
                var at = o.Position;
                WriteCpuData(o, buffers[bi].Cpus[c].Data, compression, pageSize, fields);
                var size = o.Position - at;
                bytes = o.GetBuffer();
                BinaryPrimitives.WriteUInt64LittleEndian(bytes.AsSpan(entry + 4), (ulong)at);
                BinaryPrimitives.WriteUInt64LittleEndian(bytes.AsSpan(entry + 12), (ulong)size);
                fields.Add((entry + 12, $"buffer {bi} CPU {c} size"));
                if (size > 0) cpus.Add(((int)at, (int)size));
            }

            BinaryPrimitives.WriteUInt64LittleEndian(
                o.GetBuffer().AsSpan((int)sectionAt + 8), (ulong)(o.Position - sectionAt - 16));
        }

        var result = o.ToArray();
        foreach (var (at, value) in patches)
            BinaryPrimitives.WriteUInt64LittleEndian(result.AsSpan(bodyAt + at), value());
        File.WriteAllBytes(target, result);
        return new V7Layout(pageSize, cpus.Count == 0 ? result.Length : cpus.Min(c => c.Item1), cpus, fields);
    }

    private static (string, string, List<(uint, byte[])>) Truncate(
        (string Name, string Clock, List<(uint Cpu, byte[] Data)> Cpus) b, int maxPages, int pageSize)
    {
        var max = (long)maxPages * pageSize;
        return (b.Name, b.Clock,
            b.Cpus.Select(c => (c.Cpu, c.Data.Length <= max ? c.Data : c.Data[..(int)max])).ToList());
    }

    private static (int PageSize, string Compression, List<(ushort Id, byte[] Data)>) ReadOptions(byte[] f)
    {
        var p = Array.IndexOf(f, (byte)0, 10) + 1 + 2;
        var pageSize = (int)BinaryPrimitives.ReadUInt32LittleEndian(f.AsSpan(p));
        p += 4;
        var nameEnd = Array.IndexOf(f, (byte)0, p);
        var compression = Encoding.ASCII.GetString(f, p, nameEnd - p);
        p = Array.IndexOf(f, (byte)0, nameEnd + 1) + 1;
        var next = (long)U64(f, p);
        var options = new List<(ushort, byte[])>();
        while (next != 0)
        {
            var body = SectionData(f, next, compression);
            var q = 0;
            while (true)
            {
                var id = BinaryPrimitives.ReadUInt16LittleEndian(body.AsSpan(q));
                var size = (int)BinaryPrimitives.ReadUInt32LittleEndian(body.AsSpan(q + 2));
                var data = body.AsSpan(q + 6, size).ToArray();
                q += 6 + size;
                if (id == 0) { next = (long)U64(data, 0); break; }
                options.Add((id, data));
            }
        }

        return (pageSize, compression, options);
    }

    private static (string, string, List<(uint, byte[])>) ReadBuffer(byte[] f, byte[] option, string compression)
    {
        var sectionAt = (int)U64(option, 0);
        var compressed = (BinaryPrimitives.ReadUInt16LittleEndian(f.AsSpan(sectionAt + 2)) & 1) != 0;
        var p = Array.IndexOf(option, (byte)0, 8);
        var name = Encoding.ASCII.GetString(option, 8, p - 8);
        var clockEnd = Array.IndexOf(option, (byte)0, p + 1);
        var clock = Encoding.ASCII.GetString(option, p + 1, clockEnd - p - 1);
        p = clockEnd + 1;
        var count = BinaryPrimitives.ReadUInt32LittleEndian(option.AsSpan(p + 4));
        p += 8;
        var cpus = new List<(uint, byte[])>();
        for (var i = 0; i < count; i++, p += 20)
        {
            var cpu = BinaryPrimitives.ReadUInt32LittleEndian(option.AsSpan(p));
            var at = (int)U64(option, p + 4);
            var size = (int)U64(option, p + 12);
            cpus.Add((cpu, !compressed || size == 0 ? f.AsSpan(at, size).ToArray() : Chunks(f, at, compression)));
        }

        return (name, clock, cpus);
    }

    private static byte[] Chunks(byte[] f, int at, string compression)
    {
        var count = BinaryPrimitives.ReadUInt32LittleEndian(f.AsSpan(at));
        var p = at + 4;
        var result = new MemoryStream();
        for (var i = 0; i < count; i++)
        {
            var c = (int)BinaryPrimitives.ReadUInt32LittleEndian(f.AsSpan(p));
            var u = (int)BinaryPrimitives.ReadUInt32LittleEndian(f.AsSpan(p + 4));
            result.Write(Decompress(f.AsSpan(p + 8, c), u, compression));
            p += 8 + c;
        }

        return result.ToArray();
    }

    private static byte[] SectionData(byte[] f, long at, string compression)
    {
        var flags = BinaryPrimitives.ReadUInt16LittleEndian(f.AsSpan((int)at + 2));
        var size = (int)U64(f, (int)at + 8);
        var data = f.AsSpan((int)at + 16, size);
        if ((flags & 1) == 0) return data.ToArray();
        var c = (int)BinaryPrimitives.ReadUInt32LittleEndian(data);
        var u = (int)BinaryPrimitives.ReadUInt32LittleEndian(data[4..]);
        return Decompress(data.Slice(8, c), u, compression);
    }

    private static byte[] Decompress(ReadOnlySpan<byte> data, int size, string compression)
    {
        var result = new byte[size];
        if (compression == "zstd")
        {
            using var d = new Decompressor();
            d.Unwrap(data, result);
            return result;
        }

        using var z = new ZLibStream(new MemoryStream(data.ToArray()), CompressionMode.Decompress);
        z.ReadExactly(result);
        return result;
    }

    public static byte[] Compress(ReadOnlySpan<byte> data, string compression)
    {
        if (compression == "zstd")
        {
            using var c = new Compressor(3);
            return c.Wrap(data).ToArray();
        }

        var m = new MemoryStream();
        using (var z = new ZLibStream(m, CompressionLevel.Optimal, leaveOpen: true)) z.Write(data);
        return m.ToArray();
    }

    private static void WriteSection(MemoryStream o, ushort id, byte[] data, string compression)
    {
        if (compression == "none" || id is 19 or 20 && data.Length == 0)
        {
            WriteSectionHeader(o, id, 0, data.Length);
            o.Write(data);
            return;
        }

        var packed = Compress(data, compression);
        WriteSectionHeader(o, id, 1, packed.Length + 8);
        WriteU32(o, (uint)packed.Length);
        WriteU32(o, (uint)data.Length);
        o.Write(packed);
    }

    private static void WriteCpuData(
        MemoryStream o, byte[] data, string compression, int pageSize, List<(int, string)> fields)
    {
        if (compression == "none" || data.Length == 0)
        {
            o.Write(data);
            return;
        }

        var chunk = pageSize * PagesPerChunk;
        var count = (data.Length + chunk - 1) / chunk;
        fields.Add(((int)o.Position, "chunk count"));
        WriteU32(o, (uint)count);
        for (var at = 0; at < data.Length; at += chunk)
        {
            var plain = data.AsSpan(at, Math.Min(chunk, data.Length - at));
            var packed = Compress(plain, compression);
            fields.Add(((int)o.Position, "chunk sizes"));
            WriteU32(o, (uint)packed.Length);
            WriteU32(o, (uint)plain.Length);
            o.Write(packed);
        }
    }

    private static void WriteOption(MemoryStream o, ushort id, byte[] data)
    {
        WriteU16(o, id);
        WriteU32(o, (uint)data.Length);
        o.Write(data);
    }

    private static void WriteSectionHeader(MemoryStream o, ushort id, ushort flags, long size)
    {
        WriteU16(o, id);
        WriteU16(o, flags);
        WriteU32(o, 0);
        WriteU64(o, (ulong)size);
    }

    private static void Pad(MemoryStream o, int pageSize)
    {
        while (o.Position % pageSize != 0) o.WriteByte(0);
    }

    private static ulong U64(byte[] b, int at) => BinaryPrimitives.ReadUInt64LittleEndian(b.AsSpan(at));

    private static void WriteU16(Stream s,
        ushort v)
    { Span<byte> b = stackalloc byte[2]; BinaryPrimitives.WriteUInt16LittleEndian(b, v); s.Write(b); }
    private static void WriteU32(Stream s,
        uint v)
    { Span<byte> b = stackalloc byte[4]; BinaryPrimitives.WriteUInt32LittleEndian(b, v); s.Write(b); }
    private static void WriteU64(Stream s,
        ulong v)
    { Span<byte> b = stackalloc byte[8]; BinaryPrimitives.WriteUInt64LittleEndian(b, v); s.Write(b); }
}
