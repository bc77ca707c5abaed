namespace TraceLab.Workloads.Targets;

/// <summary>
/// The traced program and every process it (transitively) forks, found through /proc by parent pid. TraceLab is a
/// child subreaper while it traces a program (<see cref="ProcNative.BecomeSubreaper"/>), so a grandchild whose parent
/// exits re-parents to TraceLab, not to init, and is still counted: the run ends when the whole tree is gone.
/// Members are identified by (pid, start time), so a recycled pid is never mistaken for a member.
/// A child of TraceLab is taken for such an orphan only when it carries the tree's mark (an environment entry the
/// program was started with, which its descendants inherit): TraceLab's other children (its tracing guard, or any
/// process the host of this library starts meanwhile) are never counted and never reaped — reaping a child .NET
/// started itself makes .NET end the process ("Error while reaping child").
/// </summary>
public sealed class ProcessTree
{
    private readonly int _root;
    private readonly ulong _rootStart;
    private readonly int _self;
    private readonly Dictionary<int, ulong> _members = [];
    private readonly Func<int, bool> _carriesMark;
    // Children of TraceLab already found without the mark, by (pid, start): the environment a process was started
    // with does not change, so each is read once.
    private readonly HashSet<(int Pid, ulong Start)> _unmarked = [];

    /// <param name="rootPid">The program.</param>
    /// <param name="self">TraceLab's pid (the subreaper).</param>
    /// <param name="carriesMark">Whether a process carries the tree's mark (the program's environment entry,
    /// <see cref="ProcEnvironment.Has"/>). TraceLab's own children (its tracing guard) do not, so none is taken for
    /// an orphan of the tree, even when the program exited before its start time could be read (start 0).</param>
    public ProcessTree(int rootPid, int self, Func<int, bool> carriesMark)
        : this(rootPid, self, ProcStat.Read(rootPid)?.StartTicks ?? 0, carriesMark)
    {
    }

    /// <param name="rootPid">The program.</param>
    /// <param name="self">TraceLab's pid (the subreaper).</param>
    /// <param name="rootStart">The root's start time (/proc/PID/stat field 22), which tells it from a recycled
    /// pid; 0 when unknown.</param>
    /// <param name="carriesMark">Whether a process carries the tree's mark.</param>
    public ProcessTree(int rootPid, int self, ulong rootStart, Func<int, bool> carriesMark)
    {
        _root = rootPid;
        _self = self;
        _rootStart = rootStart;
        _carriesMark = carriesMark;
        _members[rootPid] = _rootStart;
    }

    /// <summary>Every process seen in the tree so far (the root included), for the report's process list.</summary>
    public IReadOnlyCollection<int> Seen => _members.Keys;

    /// <summary>Looks at /proc once (/proc/PID/task/TID/children of the members and of TraceLab): adds new members,
    /// reaps
    /// exited orphans, returns how many members besides the root still run.</summary>
    public int Scan()
    {
        // Only the tree and TraceLab's own children are read: a /proc/*/stat sweep of the whole machine can stall for
        // seconds on a busy one (measured: 2 s on one process's stat), and would delay everything built on the scan.
        var pids = new HashSet<int>(_members.Keys);
        foreach (var member in _members.Keys.ToList()) pids.UnionWith(ProcStat.Children(member));
        pids.UnionWith(ProcStat.Children(_self));
        var stats = new List<ProcStat>(pids.Count);
        foreach (var pid in pids)
            if (ProcStat.Read(pid) is { } st) stats.Add(st);
        return Scan(stats, ProcNative.Reap);
    }

    /// <summary>
    /// One scan over a given process list (tests pass their own); <paramref name="reap"/> collects exited orphans.
    /// </summary>
    public int Scan(IReadOnlyList<ProcStat> processes, Action<int> reap)
    {
        var byPid = new Dictionary<int, ProcStat>(processes.Count);
        foreach (var p in processes) byPid[p.Pid] = p;
        // Parents come and go in any order in /proc: repeat until no process joins (a chain of forks joins in one
        // scan).
        for (var added = true; added;)
        {
            added = false;
            foreach (var p in processes)
            {
                if (_members.TryGetValue(p.Pid, out var known) && known == p.StartTicks) continue;
                if (!IsChildOfMember(p, byPid) && !IsOrphanOfTree(p)) continue;
                _members[p.Pid] = p.StartTicks;
                added = true;
            }
        }
        var running = 0;
        foreach (var (pid, start) in _members)
        {
            if (pid == _root || !byPid.TryGetValue(pid, out var p) || p.StartTicks != start) continue;
            if (!p.IsZombie) running++;
            else if (p.ParentPid == _self) reap(pid);
        }
        return running;
    }

    private bool IsChildOfMember(ProcStat p, Dictionary<int, ProcStat> byPid) =>
        _members.TryGetValue(p.ParentPid, out var parentStart)
        && byPid.TryGetValue(p.ParentPid, out var parent) && parent.StartTicks == parentStart
        && p.StartTicks >= parentStart;

    // Re-parented to TraceLab (the subreaper), started after the program and carrying its mark: a descendant whose
    // parent already exited. One first seen as a zombie has no environment left to tell: it is not counted (it runs
    // no more) and not reaped (it may be a child .NET started and will reap itself).
    private bool IsOrphanOfTree(ProcStat p)
    {
        if (p.ParentPid != _self || p.Pid == _root || p.IsZombie || p.StartTicks < _rootStart
            || _unmarked.Contains((p.Pid, p.StartTicks)))
            return false;
        if (_carriesMark(p.Pid)) return true;
        _unmarked.Add((p.Pid, p.StartTicks));
        return false;
    }
}
