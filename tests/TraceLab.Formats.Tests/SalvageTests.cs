using System.Buffers.Binary;
using TraceLab.Core;

namespace TraceLab.Formats.Tests;

/// <summary>
/// Salvaging reads: each CPU up to its first damage, with the skipped data described; strict reads still fail.
/// </summary>
public sealed class SalvageTests : IDisposable
{
    private const int Page = 4096;
    private readonly TestTraceFile _files = new();

    public void Dispose() => _files.Dispose();

    /// <summary>CPU 0: pages at 1000, 2000, 3000; CPU 1: pages at 1500, 2500, 3500; two switches per page.</summary>
    private string WriteThreePagesPerCpu(string name)
    {
        byte[] P(ulong ts) =>
            new PageBuilder(ts).Data(0, TestTraceFile.Switch(1, 2)).Data(10, TestTraceFile.Switch(2, 1)).Build();
        return _files.Write(name, [[P(1000), P(2000), P(3000)], [P(1500), P(2500), P(3500)]]);
    }

    private static long CpuDataStart(byte[] file, int cpuCount) => file.Length - ((long)cpuCount * 3 * Page);

    [Fact]
    public void Truncated_file_salvages_whole_pages_before_the_cut_and_says_what_was_skipped()
    {
        var path = WriteThreePagesPerCpu("cut.dat");
        var bytes = File.ReadAllBytes(path);
        var cpu1 = CpuDataStart(bytes, 2) + (3 * Page);
        // Cut inside CPU 1's second page: its first page survives, the torn second page does not.
        var cut = (int)cpu1 + Page + 100;
        File.WriteAllBytes(path, bytes[..cut]);

        var strict = Assert.Throws<TraceFormatException>(() => TestTraceFile.ReadAll(path));
        Assert.Contains(path, strict.Message, StringComparison.Ordinal);

        var (info, events) = TestTraceFile.ReadAll(path, salvage: true);
        Assert.Equal(8, events.Count);
        Assert.Equal(6, events.Count(e => e.Cpu == 0));
        Assert.Equal(new long[] { 0, 2 * Page }, info.SkippedBytesPerCpu);
        Assert.Equal(2 * Page, info.SkippedBytes);
        Assert.NotNull(info.Damage);
        Assert.Contains(
            $"CPU 1: 8,192 bytes (2 pages) skipped from offset {cpu1 + Page}", info.Damage, StringComparison.Ordinal);
        Assert.Contains($"the file ends at offset {cut}", info.Damage, StringComparison.Ordinal);
    }

    [Fact]
    public void Corrupt_page_stops_only_its_cpu()
    {
        var path = WriteThreePagesPerCpu("corrupt.dat");
        var bytes = File.ReadAllBytes(path);
        var page = (int)CpuDataStart(bytes, 2) + Page;
        BinaryPrimitives.WriteUInt64LittleEndian(bytes.AsSpan(page + 8), 0x3FFFFFFF);
        File.WriteAllBytes(path, bytes);

        var strict = Assert.Throws<TraceFormatException>(() => TestTraceFile.ReadAll(path));
        Assert.Equal(page + 8, strict.Offset);

        var (info, events) = TestTraceFile.ReadAll(path, salvage: true);
        Assert.Equal(2, events.Count(e => e.Cpu == 0));
        Assert.Equal(6, events.Count(e => e.Cpu == 1));
        Assert.Equal((2 * Page) - 8, info.SkippedBytesPerCpu![0]);
        Assert.Contains($"CPU 0: 8,184 bytes (2 pages) skipped from offset {page + 8} (expected a page commit length",
            info.Damage, StringComparison.Ordinal);
    }

    [Fact]
    public void Record_too_short_for_its_event_type_stops_its_cpu()
    {
        var shortSwitch = TestTraceFile.Switch(1, 2)[..12];
        var path = _files.Write(
            "short.dat", [[new PageBuilder(100).Data(0, TestTraceFile.Switch(1, 2)).Data(5, shortSwitch).Build()]]);

        Assert.Throws<TraceFormatException>(() => TestTraceFile.ReadAll(path));
        var (info, events) = TestTraceFile.ReadAll(path, salvage: true);
        Assert.Single(events);
        Assert.Contains("an event record long enough for its event type", info.Damage, StringComparison.Ordinal);
    }

    [Fact]
    public void Intact_file_reports_no_damage()
    {
        var (info, events) = TestTraceFile.ReadAll(WriteThreePagesPerCpu("intact.dat"), salvage: true);
        Assert.Equal(12, events.Count);
        Assert.Null(info.Damage);
        Assert.Null(info.SkippedBytesPerCpu);
    }

    [Fact]
    public void Damaged_metadata_fails_even_when_salvaging()
    {
        var path = WriteThreePagesPerCpu("meta.dat");
        var bytes = File.ReadAllBytes(path);
        File.WriteAllBytes(path, bytes[..2000]);
        var ex = Assert.Throws<TraceFormatException>(() => TestTraceFile.ReadAll(path, salvage: true));
        Assert.Contains(path, ex.Message, StringComparison.Ordinal);
    }
}
