using System.Runtime.CompilerServices;

namespace TraceLab.Analyzers.Locks;

/// <summary>
/// Which process a per-process lock object (a private futex, an fd) belongs to: the process of the thread that
/// operates on it, as <see cref="ProcessLineage"/> knows it (docs/metrics.md#lock-classification).
/// </summary>
public static class LockScope
{
    /// <summary>
    /// <paramref name="obj"/> scoped to the process of <paramref name="tid"/> (whose pass slot is
    /// <paramref name="slot"/>) when the trace identifies it; otherwise, and for system-wide objects, unchanged.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static LockObject Scoped(this ProcessLineage lineage, LockObject obj, int tid, int slot) =>
        obj.Process == LockObject.PerProcess && lineage.KnownProcessOf(tid, slot) is > 0 and var process
            ? obj with { Process = process }
            : obj;
}
