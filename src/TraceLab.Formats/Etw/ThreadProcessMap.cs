namespace TraceLab.Formats.Etw;

/// <summary>
/// Thread → owning process, from ETW thread events. Windows thread ids are not process ids (unlike Linux, where a
/// process is its main thread's tid), so grouping threads into processes needs this map. Entries outlive the thread:
/// reports are built after the trace, and a reused id is overwritten by its next Start.
/// </summary>
public sealed class ThreadProcessMap
{
    private readonly Dictionary<int, int> _processOf = new();
    private readonly Dictionary<int, string> _imageOf = new();

    public IReadOnlyDictionary<int, int> Processes => _processOf;

    public void Set(int tid, int pid) => _processOf[tid] = pid;

    public bool TryGetProcess(int tid, out int pid) => _processOf.TryGetValue(tid, out pid);

    /// <summary>Process id → image file name (e.g. "svchost.exe"), from Process Start/End/rundown events.</summary>
    public IReadOnlyDictionary<int, string> Images => _imageOf;

    /// <summary>Records a process's image name from its 8-bit NUL-terminated form, allocating only when it
    /// changes.</summary>
    public void SetImage(int pid, ReadOnlySpan<byte> name)
    {
        if (name.IsEmpty) return;
        if (_imageOf.TryGetValue(pid, out var known) && SameLatin1(known, name)) return;
        _imageOf[pid] = System.Text.Encoding.Latin1.GetString(name);
    }

    public bool TryGetImage(int pid, out string name) => _imageOf.TryGetValue(pid, out name!);

    private static bool SameLatin1(string s, ReadOnlySpan<byte> bytes)
    {
        if (s.Length != bytes.Length) return false;
        for (var i = 0; i < bytes.Length; i++)
            if (s[i] != bytes[i]) return false;
        return true;
    }
}
