using TraceLab.Analyzers;
using TraceLab.Core;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Formats.Tests.Fuzz;

/// <summary>
/// Thousands of truncated and corrupted variants of a real capture, each read through a full analysis, strictly and
/// salvaging. Allowed: success or a <see cref="TraceFormatException"/> naming the file; a salvaging read of a file
/// whose metadata is intact must succeed. Anything else, a hang or a runaway allocation fails with the case.
/// </summary>
public sealed class TraceDatFuzzTests(ITestOutputHelper output) : IDisposable
{
    private const int Seed = 20250611;
    private const int PagesPerCpu = 24;
    private static readonly TimeSpan CaseTimeout = TimeSpan.FromSeconds(5);
    // The intact base allocates a few MB through the analysis; a length field trusted before checking would ask for
    // GBs.
    private const long MaxAllocatedBytes = 64L << 20;

    private readonly TempDirectory _dir = new("tracelab-fuzz-");

    public void Dispose() => _dir.Dispose();


    [Fact]
    public void Damaged_variants_of_a_sample_trace_fail_cleanly_or_salvage()
    {
        var sample = File.ReadAllBytes(Path.Combine(RepoPaths.SampleTraces, "timemutex-cs", "trace.dat"));
        var baseTrace = FuzzBaseTrace.Build(sample, PagesPerCpu);
        var basePath = _dir.File("base.dat");
        File.WriteAllBytes(basePath, baseTrace);
        var intact = FuzzRead.TraceDat(basePath, salvage: false);
        Assert.Null(intact.Error);
        Assert.True(intact.Info!.EventCount > 1000, $"the base trace has only {intact.Info.EventCount} events");

        var cases = FuzzCases.All(baseTrace, Seed);
        var run = FuzzRunner.Run(_dir.Path, baseTrace, cases, CaseTimeout, MaxAllocatedBytes,
            (c, path, salvage, o) => Judge(c, path, salvage, o, intact.Info.EventCount));
        output.WriteLine(
            run.Describe(cases.Count, $"a {baseTrace.Length}-byte trace ({intact.Info.EventCount} events)"));
        Assert.True(run.Failures.Count == 0,
            $"{run.Failures.Count} failing cases:\n" + string.Join("\n", run.Failures.Take(30)));
        run.AssertBothOutcomesCommon(cases.Count);
    }

    /// <summary>
    /// The same over a trace whose events carry ftrace kernel and user stack records, so damaged stack records
    /// (counts past their record, records cut by a page end, stacks without their event) reach the stack reading.
    /// </summary>
    [Fact]
    public void Damaged_variants_of_a_trace_with_stack_records_fail_cleanly_or_salvage()
    {
        using var files = new TestTraceFile();
        var pages = new List<byte[][]>();
        for (var cpu = 0; cpu < 2; cpu++)
        {
            var cpuPages = new List<byte[]>();
            for (var p = 0; p < 8; p++)
            {
                var page = new PageBuilder((ulong)(1_000_000 + (p * 10_000) + cpu));
                for (var i = 0; i < 14; i++)
                {
                    var tid = 100 + (cpu * 10) + (i % 4);
                    page.Data(7, TestTraceFile.Switch(tid, tid + 1))
                        .Data(0, FtraceStackRecordTests.KernelStack(tid, 4, 0xffffffff81000000 + (ulong)i,
                            0xffffffff81000100, 0xffffffff81000200, 0xffffffff81000300))
                        .Data(0, FtraceStackRecordTests.UserStack(tid, 100 + cpu, 0x401000 + (ulong)p, 0x402000));
                }
                cpuPages.Add(page.Build());
            }
            pages.Add([.. cpuPages]);
        }
        var baseTrace = File.ReadAllBytes(files.Write("stacks.dat", pages,
            ("ftrace", FtraceStackRecordTests.KernelStackFormat), ("ftrace", FtraceStackRecordTests.UserStackFormat)));
        var basePath = _dir.File("stacks-base.dat");
        File.WriteAllBytes(basePath, baseTrace);
        using (var reader = TraceDatReader.Open(basePath))
        {
            reader.Read(new AnalysisSession(AnalysisSelection.None));
            Assert.True(reader.HasStacks);
            Assert.Equal(2 * 8 * 14, reader.Info.EventCount);
            Assert.Equal(reader.Info.EventCount, reader.Stacks.Interned);   // every event reached the stack reading
        }
        var intact = FuzzRead.TraceDat(basePath, salvage: false);
        Assert.Null(intact.Error);

        var cases = FuzzCases.All(baseTrace, Seed);
        var run = FuzzRunner.Run(_dir.Path, baseTrace, cases, CaseTimeout, MaxAllocatedBytes,
            (c, path, salvage, o) => Judge(c, path, salvage, o, intact.Info!.EventCount));
        output.WriteLine(run.Describe(cases.Count, $"a {baseTrace.Length}-byte trace with stack records"));
        Assert.True(run.Failures.Count == 0,
            $"{run.Failures.Count} failing cases:\n" + string.Join("\n", run.Failures.Take(30)));
        run.AssertBothOutcomesCommon(cases.Count);
    }

    /// <summary>Null when the outcome of a read that ended is allowed, else what went wrong.</summary>
    private static string? Judge(FuzzCase c, string path, bool salvage, FuzzOutcome o, long intactEvents)
    {
        switch (o.Error)
        {
            case null when c.CutAt is not null && !salvage:
                return "a cut trace read without error";
            case null when c.CutAt is not null
                && (o.Info!.Damage is null || o.Info.SkippedBytes <= 0 || o.Info.EventCount >= intactEvents):
                return $"a cut trace salvaged {o.Info.EventCount} of {intactEvents} events, skipping "
                    + $"{o.Info.SkippedBytes} bytes, damage: {o.Info.Damage ?? "none"}";
            case null:
                return null;
            case TraceFormatException e when e.File != path
                || !e.Message.StartsWith(path + ": at offset ", StringComparison.Ordinal):
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
