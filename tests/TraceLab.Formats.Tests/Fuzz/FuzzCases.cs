using System.Buffers.Binary;
using System.Text;

namespace TraceLab.Formats.Tests.Fuzz;

/// <summary>The damaged variants of a base trace, reproducible from a fixed seed.</summary>
internal static class FuzzCases
{
    private const int MetadataCutStride = 41;
    private const int RandomFlips = 2500;

    public static List<FuzzCase> All(byte[] trace, int seed)
    {
        var layout = TraceDatLayout.Parse(trace);
        var dataStart = (int)layout.Cpus.Where(c => c.Size > 0).Min(c => c.Offset);
        var cases = new List<FuzzCase>();
        cases.AddRange(Cuts(trace, layout, dataStart));
        cases.AddRange(Flips(trace, layout, dataStart, seed));
        cases.AddRange(SteeringFields(trace, layout));
        cases.AddRange(PageHeaders(trace, layout));
        cases.AddRange(FormatTexts(trace, layout));
        return cases;
    }

    /// <summary>
    /// Same-length edits of the header_page and event format texts: negative or huge field offsets and sizes, IDs
    /// without a format, and name/ID lines the parser no longer recognizes.
    /// </summary>
    private static IEnumerable<FuzzCase> FormatTexts(byte[] trace, TraceDatLayout layout)
    {
        var start = layout.Fields.First(f => f.Name == "header_page length").Offset;
        var end = layout.Fields.First(f => f.Name == "kallsyms length").Offset;
        var text = Encoding.ASCII.GetString(trace, start, end - start);
        foreach (var key in new[] { "offset:", "size:", "ID: " })
        {
            for (var at = text.IndexOf(key, StringComparison.Ordinal); at >= 0; at = text.IndexOf(
                key, at + 1, StringComparison.Ordinal))
            {
                var digits = at + key.Length;
                var n = 0;
                while (digits + n < text.Length && char.IsAsciiDigit(text[digits + n])) n++;
                if (n == 0) continue;
                var where = start + digits;
                yield return Text($"'{key}' at {where}: all nines", where, new string('9', n));
                if (n >= 2) yield return Text(
                    $"'{key}' at {where}: negative", where, string.Concat("-", text.AsSpan(digits + 1, n - 1)));
                yield return Text($"'{key}' at {where}: key unrecognizable", start + at, "X");
            }
        }

        for (var at = text.IndexOf("name: ", StringComparison.Ordinal); at >= 0; at = text.IndexOf(
            "name: ", at + 1, StringComparison.Ordinal))
            yield return Text($"'name:' at {start + at}: unrecognizable", start + at, "X");
    }

    private static FuzzCase Text(string description, int offset, string replacement) =>
        new(description, null, [(offset, Encoding.ASCII.GetBytes(replacement))], MetadataIntact: false);

    private static IEnumerable<FuzzCase> Cuts(byte[] trace, TraceDatLayout layout, int dataStart)
    {
        var points = new SortedSet<int>();
        for (var at = 0; at < layout.MetadataEnd; at += MetadataCutStride) points.Add(at);
        foreach (var f in layout.Fields)
        {
            points.Add(f.Offset);
            points.Add(f.Offset + 1);
            points.Add(f.Offset + f.Size - 1);
        }

        points.Add(layout.MetadataEnd);
        foreach (var p in points) yield return new FuzzCase($"cut at {p} (metadata)", p, [], MetadataIntact: false);

        // Every page boundary of the CPU data, and points inside the page header, first record and page middle.
        for (var page = dataStart; page < trace.Length; page += layout.PageSize)
        {
            foreach (var into in new[] { 0, 1, 12, 17, 2049 })
                yield return new FuzzCase(
                    $"cut at {page + into} (page boundary +{into})", page + into, [], MetadataIntact: true);
        }
    }

    private static IEnumerable<FuzzCase> Flips(byte[] trace, TraceDatLayout layout, int dataStart, int seed)
    {
        var rng = new Random(seed);
        for (var i = 0; i < RandomFlips; i++)
        {
            var writes = new List<(int, byte[])>();
            var count = rng.Next(1, 4);
            for (var k = 0; k < count; k++)
            {
                var roll = rng.NextDouble();
                int at;
                if (roll < 0.15)
                {
                    var f = layout.Fields[rng.Next(layout.Fields.Count)];
                    at = f.Offset + rng.Next(f.Size);
                }
                else if (roll < 0.5) at = rng.Next(layout.MetadataEnd);
                else at = rng.Next(dataStart, trace.Length);
                writes.Add((at, [(byte)(trace[at] ^ rng.Next(1, 256))]));
            }

            var where = string.Join(", ", writes.Select(w => $"{w.Item1}={w.Item2[0]:x2}"));
            yield return new FuzzCase(
                $"flip #{i} (seed {seed}): {where}", null, writes, writes.All(w => w.Item1 >= dataStart));
        }
    }

    /// <summary>
    /// Lengths, counts, sizes and offsets set to values a bounded reader must refuse before allocating.
    /// </summary>
    private static IEnumerable<FuzzCase> SteeringFields(byte[] trace, TraceDatLayout layout)
    {
        foreach (var f in layout.Fields)
        {
            var current = f.Size switch
            {
                2 => BinaryPrimitives.ReadUInt16LittleEndian(trace.AsSpan(f.Offset)),
                4 => BinaryPrimitives.ReadUInt32LittleEndian(trace.AsSpan(f.Offset)),
                _ => BinaryPrimitives.ReadUInt64LittleEndian(trace.AsSpan(f.Offset)),
            };
            var top = 1UL << ((f.Size * 8) - 1);
            var values = new[] { ulong.MaxValue, top, top - 1, 0UL, (ulong)trace.Length, (ulong)trace.Length + 1,
                current + 1, current - 1, current * 4096 };
            foreach (var v in values.Distinct())
            {
                var bytes = new byte[8];
                BinaryPrimitives.WriteUInt64LittleEndian(bytes, v);
                yield return new FuzzCase(
                    $"{f.Name} at {f.Offset} set to {v:x}", null, [(f.Offset, bytes[..f.Size])], MetadataIntact: false);
            }
        }
    }

    /// <summary>
    /// Ring-buffer page headers and first records with out-of-range commits, flags, stamps and lengths.
    /// </summary>
    private static IEnumerable<FuzzCase> PageHeaders(byte[] trace, TraceDatLayout layout)
    {
        var cpus = layout.Cpus.Where(c => c.Size > 0).ToList();
        foreach (var cpu in cpus)
        {
            for (var page = (int)cpu.Offset; page < cpu.Offset + cpu.Size; page += layout.PageSize)
            {
                var commit = BinaryPrimitives.ReadUInt64LittleEndian(trace.AsSpan(page + 8)) & 0x3FFFFFFF;
                var commits = new[] { ulong.MaxValue, 0x3FFFFFFFUL, (ulong)layout.PageSize - 15, 0UL,
                    commit | (1UL << 31), commit | (3UL << 30) };
                foreach (var c in commits)
                    yield return Write($"CPU {cpu.Cpu} page at {page}: commit word {c:x}", page + 8, c);
                yield return Write($"CPU {cpu.Cpu} page at {page}: timestamp ffffffffffffffff", page, ulong.MaxValue);
                // type_len 0 with a huge length word; a time extend; an absolute stamp with every bit set.
                yield return Write($"CPU {cpu.Cpu} page at {page}: first record type_len 0, length fffffff0", page + 16,
                    0xFFFFFFF0_00000000UL);
                yield return Write(
                    $"CPU {cpu.Cpu} page at {page}: first record time extend", page + 16, 0xFFFFFFFF_FFFFFFFEUL);
                yield return Write(
                    $"CPU {cpu.Cpu} page at {page}: first record absolute stamp", page + 16, 0xFFFFFFFF_FFFFFFFFUL);
                yield return Write($"CPU {cpu.Cpu} page at {page}: first record padding, length ffffffff", page + 16,
                    0xFFFFFFFF_0000003DUL);
            }
        }
    }

    private static FuzzCase Write(string description, int offset, ulong value)
    {
        var bytes = new byte[8];
        BinaryPrimitives.WriteUInt64LittleEndian(bytes, value);
        return new FuzzCase(description, null, [(offset, bytes)], MetadataIntact: true);
    }
}
