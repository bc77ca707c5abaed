using System.Globalization;
using TraceLab.Analyzers.Waits;
using TraceLab.Formats.Symbols;

namespace TraceLab.Reporting.Stacks;

/// <summary>
/// The call site a wake-chain lock's waiters block at, read off one blocking stack
/// (docs/metrics.md#wake-chain-call-site): from the innermost frame a wait stack tag names (PostgreSQL's
/// <c>ProcSleep</c>: the lock manager's sleep, whatever it sleeps in), else from the innermost frame outside the
/// wait's implementation (kernel, libc, the loader), the first <see cref="Frames"/> named frames, innermost first:
/// "ProcSleep ← LockAcquireExtended ← XactLockTableWait".
/// </summary>
public static class WakeChainCallSite
{
    /// <summary>Frames a site names: the waiting function and two of its callers.</summary>
    public const int Frames = 3;

    /// <summary>The site of <paramref name="frames"/> (innermost first); null when no frame names one.</summary>
    public static string? Of(IReadOnlyList<SymbolFrame> frames, WaitStackTags tags)
    {
        var start = tags.FirstTagged(frames.Select(f => f.Symbol))?.Index ?? -1;
        for (var i = 0; i < frames.Count && start < 0; i++)
        {
            if (!StacksReportBuilder.IsLockImplementation(frames[i]) && frames[i].Module != SymbolFrame.Unknown)
                start = i;
        }
        if (start < 0) return null;
        // Named frames only, as a finding's Where: a static function of a binary with only its dynamic symbols
        // (Debian's postgres: WaitOnLock) is an offset that says less than the next named caller. Without any, the
        // offsets are all there is.
        var held = frames.Skip(start).Where(f => f.Module != SymbolFrame.Unknown).ToList();
        var named = held.Where(f => f.Symbol is not null).ToList();
        var names = (named.Count > 0 ? named : held).Take(Frames)
            .Select(f => f.Symbol ?? f.ModuleName + "+0x" + f.Offset.ToString("x", CultureInfo.InvariantCulture))
            .ToList();
        return names.Count == 0 ? null : string.Join(" ← ", names);
    }
}
