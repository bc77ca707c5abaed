using System.Collections.Concurrent;
using TraceLab.Analyzers;
using TraceLab.Analyzers.Stacks;
using TraceLab.Core;
using TraceLab.Formats.PerfData;
using TraceLab.Formats.Registry;
using TraceLab.Formats.Symbols;
using TraceLab.Formats.Tests.Fuzz;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Formats.Tests.PerfData;

/// <summary>
/// Truncated and corrupted variants of a perf.data, each read through a full analysis, strictly and salvaging.
/// Allowed: success or a <see cref="TraceFormatException"/> naming the file and offset; anything else, a hang or a
/// runaway allocation fails with the case. The compressed cases damage a perf record -z file (COMPRESSED records,
/// SWITCH_CPU_WIDE / FORK / EXIT records as the events): bytes of the zstd data, record headers, HEADER_COMPRESSED.
/// </summary>
public sealed class PerfDataFuzzTests : IDisposable
{
    private static readonly bool[] StrictThenSalvage = [false, true];
    private const int Seed = 20261122;
    private const int Cases = 600;
    private const int CompressedCases = 3000;
    private static readonly TimeSpan CaseTimeout = TimeSpan.FromSeconds(5);
    private const long MaxAllocatedBytes = 64L << 20;

    private readonly ITestOutputHelper _output;
    private readonly string _dir = Directory.CreateTempSubdirectory("tracelab-perffuzz-").FullName;

    public PerfDataFuzzTests(ITestOutputHelper output) => _output = output;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    [Fact]
    public void Damaged_variants_fail_cleanly_or_salvage()
    {
        var b = new PerfDataBuilder();
        for (var i = 0; i < 2000; i++)
        {
            if (i % 100 == 0) b.Comm(10, 10 + i % 7, $"name{i}", i * 100, i % 2);
            if (i % 333 == 0) b.Lost(3, i * 100, i % 2);
            b.Sample(i * 100 + (i % 2) * 37, i % 2, TestTraceFile.Switch(10 + i % 7, 10 + (i + 1) % 7));
            if (i % 50 == 49) b.FinishedRound();
        }

        Fuzz(b.Build(), Cases, Seed);
    }

    [Fact]
    public void Damaged_compressed_variants_fail_cleanly_or_salvage()
    {
        // Switch records without tracepoints: the decompressed records go through the task record path too.
        var b = new PerfDataBuilder
        {
            Compress = true,
            Tracepoints = false,
            CompressChunk = 1500,
            MmapLength = 64 * 1024,
        };
        for (var i = 0; i < 3000; i++)
        {
            var cpu = i % 2;
            if (i % 100 == 0) b.Comm(10, 10 + i % 7, $"name{i}", i * 100, cpu);
            if (i % 150 == 0) b.Task(PerfRecordType.Fork, i * 100, cpu, 20 + i % 5, 10);
            if (i % 150 == 75) b.Task(PerfRecordType.Exit, i * 100, cpu, 20 + i % 5, 10);
            b.SwitchCpuWide(i * 100 + cpu * 37, cpu, 10 + i % 7, 10 + (i + 1) % 7, @out: true, preempt: i % 3 == 0);
            b.SwitchCpuWide(i * 100 + cpu * 37 + 1, cpu, 10 + (i + 1) % 7, 10 + i % 7, @out: false);
            if (i % 50 == 49) b.FinishedRound();
        }

        Fuzz(b.FinishedRound().Build(), CompressedCases, Seed + 1, compressed: true);
    }

    [Fact]
    public void Damaged_compressed_tracepoint_variants_fail_cleanly_or_salvage()
    {
        // sched_switch samples inside the compressed data, with lost counts and names, as perf record -z -e 'sched:*'.
        var b = new PerfDataBuilder { Compress = true, CompressChunk = 1200, MmapLength = 64 * 1024 };
        for (var i = 0; i < 2000; i++)
        {
            if (i % 100 == 0) b.Comm(10, 10 + i % 7, $"name{i}", i * 100, i % 2);
            if (i % 333 == 0) b.Lost(3, i * 100, i % 2);
            b.Sample(i * 100 + (i % 2) * 37, i % 2, TestTraceFile.Switch(10 + i % 7, 10 + (i + 1) % 7));
            if (i % 50 == 49) b.FinishedRound();
        }

        Fuzz(b.FinishedRound().Build(), CompressedCases, Seed + 2, compressed: true);
    }

    /// <summary>
    /// Damaged variants of <paramref name="baseFile"/>: a third cut short, the rest with 1-8 random bytes overwritten
    /// (compressed: half of those inside the data section, where the COMPRESSED records are).
    /// </summary>
    private void Fuzz(byte[] baseFile, int count, int seed, bool compressed = false) =>
        FuzzFile(baseFile, count, seed, _dir, compressed, output: _output);

    /// <summary>
    /// The damaged variants of <see cref="Fuzz"/>, written to <paramref name="dir"/>; with
    /// <paramref name="analyzeStacks"/> each read also collects the lock stacks and names every stack's frames.
    /// </summary>
    internal static void FuzzFile(byte[] baseFile, int count, int seed, string dir, bool compressed = false,
        bool analyzeStacks = false, ITestOutputHelper? output = null)
    {
        var rng = new Random(seed);
        var failures = new ConcurrentQueue<string>();
        var dataOffset = (int)BitConverter.ToUInt64(baseFile, 40);
        var dataEnd = dataOffset + (int)BitConverter.ToUInt64(baseFile, 48);
        var cases = Enumerable.Range(0, count).Select(i =>
        {
            var bytes = (byte[])baseFile.Clone();
            if (i % 3 == 0) return ($"cut at {i * baseFile.Length / count}", bytes[..(i * baseFile.Length / count)]);
            var at = compressed && i % 2 == 0 ? rng.Next(dataOffset, dataEnd) : rng.Next(bytes.Length);
            var n = 1 + rng.Next(8);
            for (var k = 0; k < n && at + k < bytes.Length; k++) bytes[at + k] = (byte)rng.Next(256);
            return ($"{n} bytes overwritten at {at}", bytes);
        }).ToList();
        long succeeded = 0, refused = 0;

        Parallel.ForEach(Enumerable.Range(0, cases.Count),
            new ParallelOptions { MaxDegreeOfParallelism = Environment.ProcessorCount }, i =>
        {
            var (what, bytes) = cases[i];
            var path = Path.Combine(dir, $"case{i}.perf.data");
            File.WriteAllBytes(path, bytes);
            foreach (var salvage in StrictThenSalvage)
            {
                if (!FuzzTimeout.TryRead(() => Run(path, salvage, analyzeStacks), CaseTimeout, out var result))
                {
                    failures.Enqueue($"{what}: hang");
                    continue;
                }
                var (error, allocated) = result;
                if (allocated > MaxAllocatedBytes) failures.Enqueue($"{what}: allocated {allocated:N0} bytes");
                if (error is null) Interlocked.Increment(ref succeeded);
                var oneLine =
                    error is TraceFormatException && error.Message.StartsWith(path + ": ", StringComparison.Ordinal);
                if (error is null || (oneLine
                    && !error.Message.Contains('\n', StringComparison.Ordinal)))
                {
                    if (error is not null) Interlocked.Increment(ref refused);
                    continue;
                }

                failures.Enqueue($"{what} [{(salvage ? "salvage" : "strict")}]: {error.GetType().Name}: "
                    + $"{error.Message}\n{error.StackTrace}");
            }

            File.Delete(path);
        });

        var kind = compressed ? " (compressed)" : "";
        output?.WriteLine($"{count} cases of a {baseFile.Length}-byte perf.data{kind}, each strict " +
            $"and salvaging: {succeeded} reads completed, {refused} refused with one line, {failures.Count} failures");
        Assert.True(failures.IsEmpty, $"{failures.Count} failing cases:\n" + string.Join("\n", failures.Take(20)));
        // Both outcomes common: reads that went through the decoder and the analysis, and reads refused by a check.
        // A fuzz whose damage never got past (or never tripped) the first check would test nothing of the decoder.
        Assert.True(succeeded >= count * 2 / 10, $"only {succeeded} of {2 * count} reads completed");
        Assert.True(refused >= count * 2 / 10, $"only {refused} of {2 * count} reads were refused");
    }

    private static (Exception? Error, long Allocated) Run(string path, bool salvage, bool analyzeStacks)
    {
        var before = GC.GetAllocatedBytesForCurrentThread();
        try
        {
            using var reader = PerfDataReader.Open(path, new TraceReadOptions { Salvage = salvage });
            var session = new AnalysisSession(FuzzRead.AllAnalyses);
            if (analyzeStacks)
            {
                var stacks = new LockStackAnalyzer(tid => tid);
                reader.Read(new TeeSink(session, stacks));
                var symbolizer = new StackSymbolizer(reader.Maps, reader.RecordedBuildIds);
                for (var id = 1; id <= reader.Stacks.Count; id++) symbolizer.Stack(reader.Stacks, id);
            }
            else reader.Read(session);
            session.Complete();
            return (null, GC.GetAllocatedBytesForCurrentThread() - before);
        }
        catch (Exception e)
        {
            return (e, GC.GetAllocatedBytesForCurrentThread() - before);
        }
    }
}
