namespace TraceLab.Core;

/// <summary>
/// The memory maps of every process of a trace over time, from the mapping records the recording kept: maps added as
/// they appear, dropped at an exec, copied to a child process at its fork (a forked child inherits its parent's
/// mappings, and no record repeats them). The kernel's own mappings are process -1 (perf records them as pid -1).
/// Memory grows with the mappings, never with the events.
/// </summary>
public sealed class ProcessMaps
{
    /// <summary>The kernel's mappings (perf writes them with pid -1).</summary>
    public const int Kernel = -1;

    private readonly Dictionary<int, List<ModuleMapping>> _byProcess = new();

    /// <summary>Mappings recorded (all processes, including those copied at forks).</summary>
    public int Count { get; private set; }

    /// <summary>Processes with at least one mapping.</summary>
    public IEnumerable<int> Processes => _byProcess.Keys;

    /// <summary>Adds a mapping of <paramref name="process"/>; a mapping it covers from then on ends.</summary>
    public void Add(int process, ModuleMapping mapping)
    {
        var list = ListOf(process);
        foreach (var m in list)
            if (m.Until == long.MaxValue && m.Start < mapping.End && mapping.Start < m.End && m.Since <= mapping.Since)
                m.Until = mapping.Since;
        list.Add(mapping);
        Count++;
    }

    /// <summary>
    /// The process replaced its program: every mapping it had ends at <paramref name="time"/>. Mappings from after
    /// it are the new program's: a recording's records need not come in time order (perf writes each CPU's buffer
    /// in turn), so the new program's maps may be read before the exec that precedes them.
    /// </summary>
    public void Exec(int process, long time)
    {
        if (!_byProcess.TryGetValue(process, out var list)) return;
        foreach (var m in list)
            if (m.Since <= time && m.Until > time) m.Until = time;
    }

    /// <summary>A new process <paramref name="child"/> starts with the mappings its parent has at that time.</summary>
    public void Fork(int parent, int child, long time)
    {
        if (parent == child || !_byProcess.TryGetValue(parent, out var list)) return;
        foreach (var m in list.ToList())
            if (m.Since <= time && time < m.Until)
                Add(child, m with { Since = time });
    }

    /// <summary>
    /// The mapping that held <paramref name="address"/> in <paramref name="process"/> at <paramref name="time"/>
    /// (the newest, when several did); kernel addresses are looked up in the kernel's mappings. Null when none did.
    /// </summary>
    public ModuleMapping? Find(int process, ulong address, long time)
    {
        if (_byProcess.TryGetValue(process, out var list) && Newest(list, address, time) is { } found) return found;
        return process != Kernel && _byProcess.TryGetValue(Kernel, out var kernel)
            ? Newest(kernel, address, time)
            : null;
    }

    /// <summary>Every mapping of <paramref name="process"/>, in the order recorded.</summary>
    public IReadOnlyList<ModuleMapping> Of(int process) =>
        _byProcess.TryGetValue(process, out var list) ? list : [];

    private static ModuleMapping? Newest(List<ModuleMapping> list, ulong address, long time)
    {
        for (var i = list.Count - 1; i >= 0; i--)
            if (list[i].Holds(address, time)) return list[i];
        // A stack recorded before its mapping's record (perf writes a synthesized map at time 0, a live one a
        // little after the first sample that uses it): the mapping that holds the address now.
        for (var i = list.Count - 1; i >= 0; i--)
            if (list[i].Holds(address, list[i].Since)) return list[i];
        return null;
    }

    private List<ModuleMapping> ListOf(int process)
    {
        if (!_byProcess.TryGetValue(process, out var list)) _byProcess[process] = list = [];
        return list;
    }
}
