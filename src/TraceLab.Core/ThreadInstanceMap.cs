using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace TraceLab.Core;

/// <summary>
/// Gives a thread that reuses the tid of one that exited its own id (<see cref="ThreadIds"/>), by rewriting the tids
/// of each event before any analyzer sees it. A tid's thread ends with its exit (sched_process_exit, perf EXIT, ETW
/// thread End); what names the tid after that belongs to a new thread once the old one has left its CPU for good
/// (the switch-out with a dead state) or a fork creates the tid again. Streaming and allocation-free per event:
/// per tid one packed int in <see cref="TidPages"/> (as the analyzers' thread slots).
/// </summary>
/// <param name="names">
/// The reader's thread names, read at each exit so that a thread whose tid is reused keeps the name it had
/// (the table itself holds the last name of each tid); null: later threads take the tid's last name.
/// </param>
public sealed class ThreadInstanceMap(ThreadTable? names = null)
{
    // Per tid: the life state in the low 2 bits, its current instance − 1 above them.
    private const int Alive = 0, Exited = 1, Gone = 2;
    private const int StateMask = 3;

    private TidPages _packed;
    /// <summary>
    /// A bit per tid modulo 65,536, set when its packed entry becomes non-zero (see <see cref="Marked"/>).
    /// </summary>
    private readonly ulong[] _marks = new ulong[MarkWords];
    private const int MarkWords = 1024;
    private readonly ThreadTable? _names = names;
    private readonly Dictionary<int, string> _namesAtExit = new();
    /// <summary>
    /// Thread id → the process the reader stated for its tid when it exited (<see cref="ThreadTable.Processes"/>).
    /// </summary>
    private readonly Dictionary<int, int> _processesAtExit = new();
    private readonly HashSet<int> _reused = [];

    /// <summary>True once any thread has exited: until then no event needs rewriting.</summary>
    public bool Active { get; private set; }

    /// <summary>
    /// Moves whenever a tid stops standing for the thread it stood for (that thread is gone for good, or the tid
    /// starts a new thread): a caller that remembered "this tid needs no rewriting" forgets it when this changes.
    /// </summary>
    public int Epoch { get; private set; }

    /// <summary>Tids that more than one thread had in the trace.</summary>
    public IReadOnlySet<int> ReusedTids => _reused;

    /// <summary>
    /// Whether <paramref name="e"/> must go through <see cref="Rewrite"/>: an exit, fork or dead switch-out, or an
    /// event naming a tid that has exited or was reused (a few array loads; most events need nothing, so the
    /// caller copies only the rare ones).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool Needs(in KernelEvent e)
    {
        if (!Active) return e.Kind == KernelEventKind.Exit;
        // Most events name no tid that ever exited: a bit test per tid settles them. Syscalls (most events) name only
        // their caller; their other tid fields are not read, as the reader has only just cleared them.
        var kind = e.Kind;
        if (Marked(e.CurrentTid) == 0)
        {
            if (((SyscallKinds >> (int)kind) & 1) != 0) return false;
            if ((Marked(e.Tid) | Marked(e.Tid2)) == 0) return ((ForkOrExit >> (int)kind) & 1) != 0;
        }
        return NeedsExactly(e);
    }

    private const int SyscallKinds =
        (1 << (int)KernelEventKind.SyscallEnter) | (1 << (int)KernelEventKind.SyscallExit);

    private const int ForkOrExit = (1 << (int)KernelEventKind.Fork) | (1 << (int)KernelEventKind.Exit);

    /// <summary>
    /// 1 when <paramref name="tid"/> may have a non-zero <see cref="Packed"/> entry: its bit (tid modulo 65,536) in
    /// <see cref="_marks"/> is set whenever an entry becomes non-zero, so 0 is certain and 1 only a maybe.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private ulong Marked(int tid) =>
        (Unsafe.Add(ref MemoryMarshal.GetArrayDataReference(_marks), (tid >> 6) & (MarkWords - 1)) >> tid) & 1;

    /// <summary><see cref="Needs"/> for an event one of whose tids may have exited or been reused.</summary>
    private bool NeedsExactly(in KernelEvent e)
    {
        if (Packed(e.CurrentTid) != 0) return true;
        switch (e.Kind)
        {
            case KernelEventKind.Switch:
                return Packed(e.Tid) != 0 || Packed(e.Tid2) != 0;
            case KernelEventKind.Waking:
            case KernelEventKind.WakeupNew:
            case KernelEventKind.Migrate:
            case KernelEventKind.Marker:
                return Packed(e.Tid) != 0;
            case KernelEventKind.Exec:
                return Packed(e.Tid) != 0 || Packed(e.Tid2) != 0;
            case KernelEventKind.Fork:
            case KernelEventKind.Exit:
                return true;
            default:
                return false;
        }
    }

    /// <summary>Rewrites the event's tids to thread ids and follows exits and forks.</summary>
    public void Rewrite(ref KernelEvent e)
    {
        e.CurrentTid = Current(e.CurrentTid);
        switch (e.Kind)
        {
            case KernelEventKind.Switch:
                {
                    var prev = e.Tid;
                    e.Tid = Current(prev);
                    e.Tid2 = Current(e.Tid2);
                    var dead = (e.State & (TaskState.ExitDead | TaskState.ExitZombie)) != 0
                        && !TaskState.IsPreempted(e.State);
                    if (dead && prev > 0 && State(prev) == Exited)
                    {
                        SetState(prev, Gone);
                        Epoch++;
                    }
                    break;
                }
            case KernelEventKind.Waking:
            case KernelEventKind.WakeupNew:
            case KernelEventKind.Migrate:
                e.Tid = Current(e.Tid);
                break;
            case KernelEventKind.Fork:
                e.Tid = Current(e.Tid);
                // A fork creating a tid whose thread exited: a new thread, even if its last switch-out was lost.
                if (e.Tid2 > 0 && State(e.Tid2) is Exited or Gone) NewInstance(e.Tid2);
                e.Tid2 = Current(e.Tid2);
                break;
            case KernelEventKind.Exit:
                {
                    var tid = e.Tid;
                    e.Tid = Current(tid);
                    if (tid > 0 && tid < ThreadIds.FirstLaterInstance && State(tid) == Alive)
                    {
                        Active = true;
                        SetState(tid, Exited);
                        // The exit's own comm is the name at that moment; a reader that decodes ahead of delivery (perf
                        // rounds) may already have given the table a later thread's name.
                        if (e.Text is { } comm) _namesAtExit[e.Tid] = comm;
                        else if (_names is not null && _names.TryGetName(tid, out var name)) _namesAtExit[e.Tid] = name;
                        if (_names is not null && _names.TryGetProcess(tid, out var process))
                            _processesAtExit[e.Tid] = process;
                    }
                    break;
                }
            case KernelEventKind.Exec:
                e.Tid = Current(e.Tid);
                e.Tid2 = Current(e.Tid2);
                break;
            case KernelEventKind.Marker:
                e.Tid = Current(e.Tid);
                break;
        }
    }

    /// <summary>
    /// After the last event: each earlier thread of a reused tid gets the name (and the stated process) it had at its
    /// exit, and the last one the tid's final name and process, in <paramref name="names"/> (by thread id).
    /// </summary>
    public void NameInstances(ThreadTable names)
    {
        foreach (var tid in _reused)
        {
            var last = ThreadIds.Of(tid, Instance(tid));
            if (names.TryGetName(tid, out var final)) names.SetName(last, final);
            if (names.TryGetProcess(tid, out var finalProcess)) names.SetProcess(last, finalProcess);
            for (var k = 1; k < Instance(tid); k++)
            {
                var id = ThreadIds.Of(tid, k);
                if (_namesAtExit.TryGetValue(id, out var atExit)) names.SetName(id, atExit);
                if (_processesAtExit.TryGetValue(id, out var processAtExit)) names.SetProcess(id, processAtExit);
            }
        }
    }

    /// <summary>
    /// The current thread id of <paramref name="tid"/>. A tid named after its thread is gone (switched out dead after
    /// its exit) belongs to a new thread whose fork was not logged.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private int Current(int tid)
    {
        if (tid <= 0 || tid >= ThreadIds.FirstLaterInstance) return tid;
        var packed = Packed(tid);
        if ((packed & StateMask) == Gone) return NewInstance(tid);
        return ThreadIds.Of(tid, (packed >> 2) + 1);
    }

    private int NewInstance(int tid)
    {
        Epoch++;
        var instance = Instance(tid);
        if (instance >= ThreadIds.MaxInstances)
        {
            SetPacked(tid, (instance - 1) << 2 | Alive);
            return ThreadIds.Of(tid, instance);
        }
        if (_names is not null && !_namesAtExit.ContainsKey(ThreadIds.Of(tid, instance))
            && _names.TryGetName(tid, out var name))
            _namesAtExit[ThreadIds.Of(tid, instance)] = name;
        if (_names is not null && _names.TryGetProcess(tid, out var process))
            _processesAtExit.TryAdd(ThreadIds.Of(tid, instance), process);
        _reused.Add(tid);
        SetPacked(tid, instance << 2 | Alive);
        return ThreadIds.Of(tid, instance + 1);
    }

    /// <summary>
    /// The thread id <paramref name="tid"/> stood for in the last event rewritten (the tid itself until it is
    /// reused): for a caller that sees the events before the rewrite, such as an exporter.
    /// </summary>
    public int IdOf(int tid) =>
        tid <= 0 || tid >= ThreadIds.FirstLaterInstance ? tid : ThreadIds.Of(tid, Instance(tid));

    private int Instance(int tid) => (Packed(tid) >> 2) + 1;

    private int State(int tid) => tid >= ThreadIds.FirstLaterInstance ? Alive : Packed(tid) & StateMask;

    private void SetState(int tid, int state) => SetPacked(tid, (Packed(tid) & ~StateMask) | state);

    /// <summary>0 for a tid whose only thread is alive (and for ids that are not tids).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private int Packed(int tid) => tid <= 0 ? 0 : _packed.Get(tid);

    private void SetPacked(int tid, int value)
    {
        _marks[(tid >> 6) & (MarkWords - 1)] |= 1UL << tid;
        _packed.At(tid) = value;
    }
}
