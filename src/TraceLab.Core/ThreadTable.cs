namespace TraceLab.Core;

/// <summary>
/// tid → name, filled from whatever the trace says (saved cmdlines, comm fields), and tid → process where the trace
/// states it (perf samples and COMM records carry pid and tid, ETW thread events their ProcessId).
/// Names are interned: asking for the same name bytes again costs no allocation.
/// </summary>
public sealed class ThreadTable
{
    private readonly Dictionary<int, string> _names = new();
    private readonly Dictionary<int, int> _processes = new();

    public IReadOnlyDictionary<int, string> Names => _names;

    /// <summary>
    /// tid → the process (pid, tgid) the trace itself says the thread belongs to, the last one it said; empty for
    /// formats whose events do not carry it (trace.dat). A reader may fill it ahead of the events it delivers.
    /// </summary>
    public IReadOnlyDictionary<int, int> Processes => _processes;

    /// <summary>The process the trace states for <paramref name="tid"/>; false when it states none.</summary>
    public bool TryGetProcess(int tid, out int pid) => _processes.TryGetValue(tid, out pid);

    /// <summary>Records that the trace says <paramref name="tid"/> belongs to process <paramref name="pid"/>.</summary>
    public void SetProcess(int tid, int pid)
    {
        if (tid > 0 && pid > 0) _processes[tid] = pid;
    }

    /// <summary>A table of its own with the same names and processes (to add to without changing this one).</summary>
    public ThreadTable Copy()
    {
        var copy = new ThreadTable();
        foreach (var (tid, name) in _names) copy._names[tid] = name;
        foreach (var (tid, pid) in _processes) copy._processes[tid] = pid;
        return copy;
    }

    public string NameOf(int tid) => tid == 0 ? "<idle>" : _names.TryGetValue(tid, out var n) ? n : $"tid {tid}";

    public bool TryGetName(int tid, out string name) => _names.TryGetValue(tid, out name!);

    public void SetName(int tid, string name) => _names[tid] = name;

    /// <summary>Sets the name from NUL-padded comm bytes, allocating only when it differs from the known one.</summary>
    public void SetName(int tid, ReadOnlySpan<byte> comm)
    {
        var len = comm.IndexOf((byte)0);
        if (len >= 0) comm = comm[..len];
        if (_names.TryGetValue(tid, out var existing) && SameAscii(existing, comm)) return;
        _names[tid] = System.Text.Encoding.UTF8.GetString(comm);
    }

    private static bool SameAscii(string s, ReadOnlySpan<byte> bytes)
    {
        if (s.Length != bytes.Length) return false;
        for (var i = 0; i < bytes.Length; i++)
            if (s[i] != bytes[i]) return false;
        return true;
    }
}
