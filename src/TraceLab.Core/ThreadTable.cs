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

    /// <summary>
    /// Per tid, each name it had from the time the trace first showed it, in time order: what
    /// <see cref="TryGetNameAt"/> reads. A reader fills the table ahead of the events it delivers (and, with analysis
    /// threads, by an amount that varies from run to run), so the name "now" is a later event's; the name at an
    /// event's time is the same however far ahead the reader is. Guarded by itself: the reader writes it while the
    /// analysis threads read it. Names given without a time (saved cmdlines, the current name only) have none.
    /// </summary>
    private readonly Dictionary<int, List<(long At, string Name)>> _history = new();

    public IReadOnlyDictionary<int, string> Names => _names;

    /// <summary>
    /// Told of every change to the table as it is made (a name, a process, a name change in the history), on the
    /// thread that makes it; null: nobody. A change that leaves the table as it was (the name it already has) is not
    /// one. What a recording of a pass needs to give a replay the table the reader had at each event
    /// (<see cref="IThreadTableChanges"/>).
    /// </summary>
    public IThreadTableChanges? Changes { get; set; }

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
        if (tid <= 0 || pid <= 0) return;
        if (Changes is { } changes && (!_processes.TryGetValue(tid, out var was) || was != pid))
            changes.Process(tid, pid);
        _processes[tid] = pid;
    }

    /// <summary>A table of its own with the same names and processes (to add to without changing this one).</summary>
    public ThreadTable Copy()
    {
        var copy = new ThreadTable();
        foreach (var (tid, name) in _names) copy._names[tid] = name;
        foreach (var (tid, pid) in _processes) copy._processes[tid] = pid;
        lock (_history)
        {
            foreach (var (tid, changes) in _history) copy._history[tid] = [.. changes];
        }
        return copy;
    }

    public string NameOf(int tid) => tid == 0 ? "<idle>" : _names.TryGetValue(tid, out var n) ? n : $"tid {tid}";

    public bool TryGetName(int tid, out string name) => _names.TryGetValue(tid, out name!);

    public void SetName(int tid, string name)
    {
        if (Changes is { } changes && (!_names.TryGetValue(tid, out var was) || was != name)) changes.Name(tid, name);
        _names[tid] = name;
    }

    /// <summary>
    /// Sets the name as an event at <paramref name="at"/> (trace clock) shows it: the current name, and, when it
    /// differs from the name in effect then, a change at that time (<see cref="TryGetNameAt"/>).
    /// </summary>
    public void SetName(int tid, string name, long at)
    {
        SetName(tid, name);
        Record(tid, name, at);
    }

    /// <summary>
    /// Adds a change to <paramref name="name"/> at <paramref name="at"/> to the history alone, as
    /// <see cref="SetName(int, string, long)"/> does (none when that is the name in effect then); the current name
    /// stays. For a replay of <see cref="IThreadTableChanges.NameAt"/>.
    /// </summary>
    public void AddNameChange(int tid, string name, long at) => Record(tid, name, at);

    /// <summary>A change to <paramref name="name"/> at <paramref name="at"/>, placed by time; none when that is the
    /// name in effect then.</summary>
    private void Record(int tid, string name, long at)
    {
        lock (_history)
        {
            if (!_history.TryGetValue(tid, out var changes)) _history[tid] = changes = [];
            var i = changes.Count;
            while (i > 0 && changes[i - 1].At > at) i--;
            if (i > 0 && changes[i - 1].Name == name) return;
            changes.Insert(i, (at, name));
            Changes?.NameAt(tid, name, at);
        }
    }

    /// <summary>
    /// The name <paramref name="tid"/> had at <paramref name="at"/>: the last one an event at or before that time
    /// showed; false when no event by then named it (<see cref="SetName(int, string, long)"/>).
    /// </summary>
    public bool TryGetNameAt(int tid, long at, out string name)
    {
        lock (_history)
        {
            if (_history.TryGetValue(tid, out var changes))
            {
                for (var i = changes.Count - 1; i >= 0; i--)
                {
                    if (changes[i].At > at) continue;
                    name = changes[i].Name;
                    return true;
                }
            }
        }
        name = "";
        return false;
    }

    /// <summary>Sets the name from NUL-padded comm bytes, allocating only when it differs from the known one.</summary>
    public void SetName(int tid, ReadOnlySpan<byte> comm) => SetName(tid, comm, null);

    /// <summary>
    /// As <see cref="SetName(int, ReadOnlySpan{byte})"/>, shown by an event at <paramref name="at"/> (null: no time,
    /// the current name only): a name that differs from the one in effect then is a change at that time.
    /// </summary>
    public void SetName(int tid, ReadOnlySpan<byte> comm, long? at)
    {
        var len = comm.IndexOf((byte)0);
        if (len >= 0) comm = comm[..len];
        // The current name is the last one given, in the order given, as it always was; the history is by time.
        if (!_names.TryGetValue(tid, out var name) || !SameAscii(name, comm))
        {
            name = System.Text.Encoding.UTF8.GetString(comm);
            Changes?.Name(tid, name);
            _names[tid] = name;
        }
        if (at is { } time) Record(tid, name, time);
    }

    private static bool SameAscii(string s, ReadOnlySpan<byte> bytes)
    {
        if (s.Length != bytes.Length) return false;
        for (var i = 0; i < bytes.Length; i++)
            if (s[i] != bytes[i]) return false;
        return true;
    }
}
