using System.Collections.Concurrent;
using TraceLab.Analyzers;
using TraceLab.Core;
using TraceLab.Formats.PerfData;
using TraceLab.Formats.TraceDat;
using Xunit;
using Xunit.Abstractions;

namespace TraceLab.Formats.Tests.PerfData;

/// <summary>
/// Truncated and corrupted variants of a perf.data, each read through a full analysis, strictly and salvaging.
/// Allowed: success or a <see cref="TraceFormatException"/> naming the file and offset; anything else, a hang or a
/// runaway allocation fails with the case.
/// </summary>
public sealed class PerfDataFuzzTests : IDisposable
{
    private static readonly bool[] StrictThenSalvage = [false, true];
    private const int Seed = 20261122;
    private const int Cases = 600;
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

        var baseFile = b.Build();
        var rng = new Random(Seed);
        var failures = new ConcurrentQueue<string>();
        var cases = Enumerable.Range(0, Cases).Select(i =>
        {
            var bytes = (byte[])baseFile.Clone();
            if (i % 3 == 0) return ($"cut at {i * baseFile.Length / Cases}", bytes[..(i * baseFile.Length / Cases)]);
            var at = rng.Next(bytes.Length);
            var n = 1 + rng.Next(8);
            for (var k = 0; k < n && at + k < bytes.Length; k++) bytes[at + k] = (byte)rng.Next(256);
            return ($"{n} bytes overwritten at {at}", bytes);
        }).ToList();

        Parallel.ForEach(Enumerable.Range(0, cases.Count), new ParallelOptions { MaxDegreeOfParallelism = Environment.ProcessorCount }, i =>
        {
            var (what, bytes) = cases[i];
            var path = Path.Combine(_dir, $"case{i}.perf.data");
            File.WriteAllBytes(path, bytes);
            foreach (var salvage in StrictThenSalvage)
            {
                var task = Task.Factory.StartNew(() => Run(path, salvage), CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
                if (!task.Wait(CaseTimeout)) { failures.Enqueue($"{what}: hang"); continue; }
                var (error, allocated) = task.Result;
                if (allocated > MaxAllocatedBytes) failures.Enqueue($"{what}: allocated {allocated:N0} bytes");
                if (error is null || (error is TraceFormatException && error.Message.StartsWith(path + ": ", StringComparison.Ordinal))) continue;
                failures.Enqueue($"{what} [{(salvage ? "salvage" : "strict")}]: {error.GetType().Name}: {error.Message}\n{error.StackTrace}");
            }

            File.Delete(path);
        });

        _output.WriteLine($"{Cases} cases of a {baseFile.Length}-byte perf.data");
        Assert.True(failures.IsEmpty, $"{failures.Count} failing cases:\n" + string.Join("\n", failures.Take(20)));
    }

    private static (Exception? Error, long Allocated) Run(string path, bool salvage)
    {
        var before = GC.GetAllocatedBytesForCurrentThread();
        try
        {
            using var reader = PerfDataReader.Open(path, new TraceDatReadOptions { Salvage = salvage });
            var session = new AnalysisSession(AnalysisKind.All);
            reader.Read(session);
            session.Complete();
            return (null, GC.GetAllocatedBytesForCurrentThread() - before);
        }
        catch (Exception e)
        {
            return (e, GC.GetAllocatedBytesForCurrentThread() - before);
        }
    }
}
