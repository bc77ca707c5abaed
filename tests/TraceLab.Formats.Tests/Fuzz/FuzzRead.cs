using TraceLab.Analyzers;
using TraceLab.Analyzers.Findings;
using TraceLab.Core;
using TraceLab.Formats.Registry;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Formats.Tests.Fuzz;

/// <summary>What one read of a damaged trace gave: its info, or the exception, and what the read allocated.</summary>
internal sealed record FuzzOutcome(TraceInfo? Info, Exception? Error, long AllocatedBytes);

/// <summary>The read every trace.dat fuzz test makes of a damaged file: the reader and a full analysis.</summary>
internal static class FuzzRead
{
    /// <summary>Every analysis of TraceLab.Analyzers' catalog (the findings collector's included).</summary>
    public static readonly AnalysisSelection AllAnalyses = AnalysisSelection.All;

    /// <summary>Reads <paramref name="path"/> through every analysis; never throws.</summary>
    public static FuzzOutcome TraceDat(string path, bool salvage)
    {
        var before = GC.GetAllocatedBytesForCurrentThread();
        try
        {
            using var reader = TraceDatReader.Open(path, new TraceReadOptions { Salvage = salvage });
            var session = new AnalysisSession(AllAnalyses);
            reader.Read(session);
            session.Complete();
            return new FuzzOutcome(reader.Info, null, GC.GetAllocatedBytesForCurrentThread() - before);
        }
        catch (Exception e)
        {
            return new FuzzOutcome(null, e, GC.GetAllocatedBytesForCurrentThread() - before);
        }
    }

    /// <summary>
    /// Raises <paramref name="target"/> to <paramref name="value"/> when larger, from parallel cases.
    /// </summary>
    public static void InterlockedMax(ref long target, long value)
    {
        long seen;
        while (value > (seen = Interlocked.Read(ref target))
            && Interlocked.CompareExchange(ref target, value, seen) != seen)
        {
        }
    }
}
