using System.Collections.Concurrent;
using System.Diagnostics;
using TraceLab.Analyzers;
using TraceLab.Core;
using TraceLab.Formats.TraceDat;
using TraceLab.TestSupport;
using Xunit;
using Xunit.Abstractions;

namespace TraceLab.Formats.Tests.Fuzz;

/// <summary>
/// Thousands of truncated and corrupted variants of a real capture, each read through a full analysis, strictly and
/// salvaging. Allowed: success or a <see cref="TraceFormatException"/> naming the file; a salvaging read of a file
/// whose metadata is intact must succeed. Anything else, a hang or a runaway allocation fails with the case.
/// </summary>
public sealed class TraceDatFuzzTests : IDisposable
{
    private const int Seed = 20250611;
    private static readonly bool[] StrictThenSalvage = [false, true];
    private const int PagesPerCpu = 24;
    private static readonly TimeSpan CaseTimeout = TimeSpan.FromSeconds(5);
    // The intact base allocates a few MB through the analysis; a length field trusted before checking would ask for GBs.
    private const long MaxAllocatedBytes = 64L << 20;

    private readonly ITestOutputHelper _output;
    private readonly string _dir = Directory.CreateTempSubdirectory("tracelab-fuzz-").FullName;

    public TraceDatFuzzTests(ITestOutputHelper output) => _output = output;

    public void Dispose() => Directory.Delete(_dir, recursive: true);


    [Fact]
    public void Damaged_variants_of_a_sample_trace_fail_cleanly_or_salvage()
    {
        var sample = File.ReadAllBytes(Path.Combine(RepoPaths.SampleTraces, "timemutex-cs", "trace.dat"));
        var baseTrace = FuzzBaseTrace.Build(sample, PagesPerCpu);
        var basePath = Path.Combine(_dir, "base.dat");
        File.WriteAllBytes(basePath, baseTrace);
        var intact = FuzzRead.TraceDat(basePath, salvage: false);
        Assert.Null(intact.Error);
        Assert.True(intact.Info!.EventCount > 1000, $"the base trace has only {intact.Info.EventCount} events");

        var cases = FuzzCases.All(baseTrace, Seed);
        var failures = new ConcurrentQueue<string>();
        var maxAllocated = 0L;
        var clock = Stopwatch.StartNew();
        Parallel.ForEach(Enumerable.Range(0, cases.Count), new ParallelOptions { MaxDegreeOfParallelism = Environment.ProcessorCount }, i =>
        {
            var c = cases[i];
            var path = Path.Combine(_dir, $"case{i}.dat");
            File.WriteAllBytes(path, c.Apply(baseTrace));
            foreach (var salvage in StrictThenSalvage)
            {
                var problem = Check(c, path, salvage, intact.Info.EventCount, out var allocated);
                FuzzRead.InterlockedMax(ref maxAllocated, allocated);
                if (problem is not null) failures.Enqueue($"{c} [{(salvage ? "salvage" : "strict")}]: {problem}");
            }

            File.Delete(path);
        });

        _output.WriteLine($"{cases.Count} fuzz cases ({cases.Count * 2} reads, strict and salvaging) of a {baseTrace.Length}-byte trace " +
            $"({intact.Info.EventCount} events) in {clock.Elapsed.TotalSeconds:F1} s; most allocated by one read: {maxAllocated >> 20} MB");
        Assert.True(failures.IsEmpty, $"{failures.Count} failing cases:\n" + string.Join("\n", failures.Take(30)));
    }

    /// <summary>Null when the outcome is allowed, else what went wrong.</summary>
    private static string? Check(FuzzCase c, string path, bool salvage, long intactEvents, out long allocated)
    {
        allocated = 0;
        // A thread of its own: a pool task could be run inline by Wait, and then a hang would never time out.
        var task = Task.Factory.StartNew(() => FuzzRead.TraceDat(path, salvage), CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
        if (!task.Wait(CaseTimeout)) return $"no result within {CaseTimeout.TotalSeconds} s (hang)";
        var o = task.Result;
        allocated = o.AllocatedBytes;
        if (o.AllocatedBytes > MaxAllocatedBytes) return $"allocated {o.AllocatedBytes:N0} bytes";
        switch (o.Error)
        {
            case null when c.CutAt is not null && !salvage:
                return "a cut trace read without error";
            case null when c.CutAt is not null && (o.Info!.Damage is null || o.Info.SkippedBytes <= 0 || o.Info.EventCount >= intactEvents):
                return $"a cut trace salvaged {o.Info.EventCount} of {intactEvents} events, skipping {o.Info.SkippedBytes} bytes, damage: {o.Info.Damage ?? "none"}";
            case null:
                return null;
            case TraceFormatException e when e.File != path || !e.Message.StartsWith(path + ": at offset ", StringComparison.Ordinal):
                return $"TraceFormatException without the file and offset: {e.Message}";
            case TraceFormatException e when salvage && c.MetadataIntact:
                return $"salvaging failed although only CPU data was damaged: {e.Message}";
            case TraceFormatException:
                return null;
            default:
                return $"{o.Error.GetType().Name}: {o.Error.Message}\n{o.Error.StackTrace}";
        }
    }
}
