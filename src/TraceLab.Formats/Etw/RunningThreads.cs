namespace TraceLab.Formats.Etw;

/// <summary>
/// The thread each CPU last switched to. Some kernel events carry no header thread id (-1); the model's
/// <c>Pid</c> means "the thread running on this CPU", which the last CSwitch on that CPU says. Without it analyzers
/// would see a thread -1 appear and count a broken switch chain.
/// </summary>
internal sealed class RunningThreads
{
    private int[] _current = [];

    public void OnSwitch(int cpu, int nextTid)
    {
        if ((uint)cpu >= (uint)_current.Length) Grow(cpu);
        _current[cpu] = nextTid;
    }

    /// <summary>The header thread when known, else the CPU's current thread, else -1 (still unknown).</summary>
    public int Resolve(int cpu, int headerThreadId)
    {
        if (headerThreadId != EtwEventHeader.UnknownThread) return headerThreadId;
        return (uint)cpu < (uint)_current.Length ? _current[cpu] : EtwEventHeader.UnknownThread;
    }

    private void Grow(int cpu)
    {
        if (cpu < 0) throw new ArgumentOutOfRangeException(nameof(cpu), cpu, "processor numbers are never negative");
        var old = _current.Length;
        Array.Resize(ref _current, Math.Max(cpu + 1, old * 2));
        _current.AsSpan(old).Fill(EtwEventHeader.UnknownThread);
    }
}
