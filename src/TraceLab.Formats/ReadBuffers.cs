namespace TraceLab.Formats;

/// <summary>
/// How the trace readers' buffers take memory (the perf.data reader's 16 MiB window): docs/performance.md#window-steps.
/// </summary>
public static class ReadBuffers
{
    private static int _keepers;
    private static ReadBuffer? _kept;
    private static readonly object Gate = new();

    /// <summary>
    /// Whether the buffers ask Linux for transparent huge pages. False unless set: the CLI sets it with the heap's
    /// choice (huge pages only where new 4 KiB pages are dear), since on a VM that hands free memory back to its host
    /// a huge page can cost 20 times its 4 KiB pages and the first one held up the first event by ~100 ms.
    /// </summary>
    public static bool HugePages { get; set; }

    /// <summary>
    /// Until the returned scope is disposed, a finished read's buffer is kept for the next read instead of freed: a
    /// process that reads trace after trace (`tracelab bench`) then writes its pages once, not once per read. At most
    /// one buffer is kept; it is freed when the last scope ends.
    /// </summary>
    public static IDisposable KeepBetweenReads()
    {
        lock (Gate) _keepers++;
        return new Scope();
    }

    /// <summary>True when <paramref name="buffer"/> is now kept (a scope is open and none was kept).</summary>
    internal static bool Keep(ReadBuffer buffer)
    {
        lock (Gate)
        {
            if (_keepers == 0 || _kept is not null) return false;
            _kept = buffer;
            return true;
        }
    }

    /// <summary>The kept buffer, no longer kept (null: none).</summary>
    internal static ReadBuffer? TakeKept()
    {
        lock (Gate)
        {
            var kept = _kept;
            _kept = null;
            return kept;
        }
    }

    private sealed class Scope : IDisposable
    {
        private int _disposed;

        public void Dispose()
        {
            if (Interlocked.Exchange(ref _disposed, 1) != 0) return;
            ReadBuffer? free = null;
            lock (Gate)
            {
                if (--_keepers == 0)
                {
                    free = _kept;
                    _kept = null;
                }
            }
            free?.Free();
        }
    }
}
