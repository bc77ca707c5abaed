using System.Collections.Concurrent;
using System.Diagnostics;
using TraceLab.Core;

namespace TraceLab.Formats.Tests.Fuzz;

/// <summary>What the damaged variants of one base trace gave, each read strictly and salvaging.</summary>
internal sealed record FuzzSummary(IReadOnlyList<string> Failures, long MaxAllocated, int Read, int Refused, int Other,
    TimeSpan Elapsed)
{
    public string Describe(int cases, string what) =>
        $"{cases} fuzz cases ({cases * 2} reads, strict and salvaging) of {what} in {Elapsed.TotalSeconds:F1} s: " +
        $"{Read} read, {Refused} refused with one line, {Other} other; most allocated by one read: "
            + $"{MaxAllocated >> 20} MB";

    /// <summary>
    /// Fails unless every case was read twice and both outcomes are common: at least a tenth of the reads went through
    /// the decoder and the whole analysis, and at least a tenth were refused by a check. A fuzz whose damage never
    /// got past the first header check (or never tripped one) would pass without testing the decoder.
    /// </summary>
    public void AssertBothOutcomesCommon(int cases)
    {
        Assert.Equal(2 * cases, Read + Refused + Other);
        Assert.True(Read >= cases * 2 / 10, $"only {Read} of {2 * cases} reads went through the analysis");
        Assert.True(Refused >= cases * 2 / 10, $"only {Refused} of {2 * cases} reads were refused");
    }
}

/// <summary>The loop every trace.dat fuzz test runs: each case written beside the base, read twice, judged.</summary>
internal static class FuzzRunner
{
    private static readonly bool[] StrictThenSalvage = [false, true];

    /// <summary>
    /// Writes each of <paramref name="cases"/> applied to <paramref name="baseTrace"/> into <paramref name="dir"/>
    /// and reads it strictly, then salvaging. A read that gives no result within <paramref name="caseTimeout"/> (a
    /// hang) or allocates more than <paramref name="maxAllocated"/> fails; any other outcome goes to
    /// <paramref name="judge"/>, which returns what went wrong or null.
    /// </summary>
    public static FuzzSummary Run(string dir, byte[] baseTrace, IReadOnlyList<FuzzCase> cases, TimeSpan caseTimeout,
        long maxAllocated, Func<FuzzCase, string, bool, FuzzOutcome, string?> judge)
    {
        var failures = new ConcurrentQueue<string>();
        var maxSeen = 0L;
        var outcomes = new int[3];
        var clock = Stopwatch.StartNew();
        var parallel = new ParallelOptions { MaxDegreeOfParallelism = Environment.ProcessorCount };
        Parallel.ForEach(Enumerable.Range(0, cases.Count), parallel, i =>
        {
            var c = cases[i];
            var path = Path.Combine(dir, $"case{i}.dat");
            File.WriteAllBytes(path, c.Apply(baseTrace));
            foreach (var salvage in StrictThenSalvage)
            {
                var problem =
                    Check(c, path, salvage, caseTimeout, maxAllocated, judge, out var allocated, out var kind);
                Interlocked.Increment(ref outcomes[kind]);
                FuzzRead.InterlockedMax(ref maxSeen, allocated);
                if (problem is not null) failures.Enqueue($"{c} [{(salvage ? "salvage" : "strict")}]: {problem}");
            }

            File.Delete(path);
        });
        return new FuzzSummary([.. failures], maxSeen, outcomes[0], outcomes[1], outcomes[2], clock.Elapsed);
    }

    /// <summary>Null when the outcome is allowed, else what went wrong; kind 0 read, 1 refused, 2 other.</summary>
    private static string? Check(FuzzCase c, string path, bool salvage, TimeSpan timeout, long maxAllocated,
        Func<FuzzCase, string, bool, FuzzOutcome, string?> judge, out long allocated, out int kind)
    {
        allocated = 0;
        kind = 2;
        if (!FuzzTimeout.TryRead(() => FuzzRead.TraceDat(path, salvage), timeout, out var o))
            return $"no result within {timeout.TotalSeconds} s, nor read again alone (hang)";
        allocated = o.AllocatedBytes;
        if (o.AllocatedBytes > maxAllocated) return $"allocated {o.AllocatedBytes:N0} bytes";
        kind = o.Error is null ? 0 : o.Error is TraceFormatException ? 1 : 2;
        return judge(c, path, salvage, o);
    }
}
