using System.Buffers.Binary;
using TraceLab.Core;
using TraceLab.Formats.Registry;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Formats.Tests.TraceDatV7;

/// <summary>Adversarial v7 files built from a real one: loops, decompression bombs, truncation with salvage.</summary>
public sealed class TraceDatV7BadInputTests : IDisposable
{
    private const string Source = "tracecmd/hip24_test_guest_v7zlib.dat";
    private readonly string _dir = Directory.CreateTempSubdirectory("tracelab-v7bad-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    private (string Path, byte[] Bytes, V7Layout Layout) Base(string compression)
    {
        var path = Path.Combine(_dir, $"base-{compression}.dat");
        var layout =
            V7Writer.Rewrite(ExternalTraces.PathOf(Source), path, compression, maxPagesPerCpu: 48, dropSymbols: true);
        return (path, File.ReadAllBytes(path), layout);
    }

    private string Write(string name, byte[] bytes)
    {
        var path = Path.Combine(_dir, name);
        File.WriteAllBytes(path, bytes);
        return path;
    }

    [ExternalTraceFact(Source)]
    public void An_options_chain_that_loops_back_is_refused()
    {
        var (_, bytes, layout) = Base("zstd");
        var options = layout.Fields.First(f => f.Name == "options section header").Offset;
        var size = (int)BinaryPrimitives.ReadUInt64LittleEndian(bytes.AsSpan(options + 8));
        // The DONE option's next-section offset is the section's last 8 bytes: point it back at the section.
        BinaryPrimitives.WriteUInt64LittleEndian(bytes.AsSpan(options + 16 + size - 8), (ulong)options);
        var path = Write("loop.dat", bytes);
        var e = Assert.Throws<TraceFormatException>(() => TraceDatReader.Open(path));
        Assert.Contains("without cycles", e.Message, StringComparison.Ordinal);
    }

    [ExternalTraceTheory(Source)]
    [InlineData("zlib")]
    [InlineData("zstd")]
    public void Decompression_bombs_are_refused_by_their_declared_size(string compression)
    {
        var (_, bytes, layout) = Base(compression);

        // A metadata section declaring 2 GiB of decompressed data.
        var formats = layout.Fields.First(f => f.Name == "section 18 header").Offset;
        var section = (byte[])bytes.Clone();
        BinaryPrimitives.WriteUInt32LittleEndian(section.AsSpan(formats + 20), 1u << 31);
        var e = Assert.Throws<TraceFormatException>(() => TraceDatReader.Open(Write("section-bomb.dat", section)));
        Assert.Contains(
            "decompressing to at most 33554432 bytes, found 2147483648", e.Message, StringComparison.Ordinal);

        // A chunk declaring 4 GiB, and one declaring a byte less than its data decompresses to.
        var chunk = layout.Fields.First(f => f.Name == "chunk sizes").Offset;
        var huge = (byte[])bytes.Clone();
        BinaryPrimitives.WriteUInt32LittleEndian(huge.AsSpan(chunk + 4), uint.MaxValue);
        e = Assert.Throws<TraceFormatException>(() => ReadAll(Write("chunk-bomb.dat", huge)));
        Assert.Contains(
            "a chunk decompressing to 1..4194304 bytes, found 4294967295", e.Message, StringComparison.Ordinal);

        var less = (byte[])bytes.Clone();
        var declared = BinaryPrimitives.ReadUInt32LittleEndian(less.AsSpan(chunk + 4));
        BinaryPrimitives.WriteUInt32LittleEndian(less.AsSpan(chunk + 4), declared - 1);
        e = Assert.Throws<TraceFormatException>(() => ReadAll(Write("chunk-short.dat", less)));
        Assert.Contains(
            $"decompresses to its declared {declared - 1} bytes, found more", e.Message, StringComparison.Ordinal);
    }

    [ExternalTraceTheory(Source)]
    [InlineData("zlib")]
    [InlineData("zstd")]
    public void A_cut_compressed_file_fails_in_one_line_and_salvages_up_to_the_cut(string compression)
    {
        var (path, bytes, layout) = Base(compression);
        var intact = ReadAll(path);
        var cpu = layout.Cpus[0];
        var cut = Write("cut.dat", bytes[..(cpu.Offset + cpu.Size / 2)]);

        var e = Assert.Throws<TraceFormatException>(() => ReadAll(cut));
        Assert.StartsWith(cut + ": at offset ", e.Message, StringComparison.Ordinal);
        Assert.DoesNotContain('\n', e.Message);

        var salvaged = ReadAll(cut, salvage: true);
        Assert.InRange(salvaged.EventCount, 1, intact.EventCount - 1);
        Assert.NotNull(salvaged.Damage);
        Assert.True(salvaged.SkippedBytes > 0);
    }

    private static TraceInfo ReadAll(string path, bool salvage = false)
    {
        using var reader = TraceDatReader.Open(path, new TraceReadOptions { Salvage = salvage });
        reader.Read(new TraceDatRoundTripTests.CountingSink());
        return reader.Info;
    }
}
