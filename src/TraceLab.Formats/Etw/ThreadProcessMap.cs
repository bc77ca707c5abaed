namespace TraceLab.Formats.Etw;

/// <summary>
/// Thread → owning process, from ETW thread events. Windows thread ids are not process ids (unlike Linux, where a
/// process is its main thread's tid), so grouping threads into processes needs this map. Entries outlive the thread:
/// reports are built after the trace, and a reused id is overwritten by its next Start.
/// </summary>
public sealed class ThreadProcessMap
{
    private readonly Dictionary<int, int> _processOf = new();

    public IReadOnlyDictionary<int, int> Processes => _processOf;

    public void Set(int tid, int pid) => _processOf[tid] = pid;

    public bool TryGetProcess(int tid, out int pid) => _processOf.TryGetValue(tid, out pid);
}
