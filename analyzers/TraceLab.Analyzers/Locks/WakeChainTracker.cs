using TraceLab.Core;

namespace TraceLab.Analyzers.Locks;

/// <summary>
/// Finds locks through their wake chains (docs/metrics.md#wake-chains): waiters that park on objects of their own
/// (a per-waiter semaphore, a latch in epoll_wait) and are released one after another by the previous holder. A
/// wake chain is one wait (syscall and operation) in one program: threads, or processes of the same name (a server's
/// forked workers), count together. A peer's wakeup of a thread parked in that wait is a tentative handoff; it is
/// confirmed when the woken thread releases the next waiter in the same wait (it held the lock), and is a lost race
/// when a peer releases the woken thread again first (another waiter got the lock; it queued again). Waits in
/// between that something else ends (a client's request under the same epoll_wait) neither confirm nor cancel it.
/// Confirmed handoffs go to <see cref="ConvoyAnalyzer"/>'s handoff and episode accounting on a
/// <see cref="LockObjectKind.WakeChain"/> object. Objects that several threads wait on are shared lock objects, which
/// <see cref="ConvoyAnalyzer"/> already names:
/// wakeups of their waiters are left out here. When the switches carry the blocking threads' stacks, each lock also
/// keeps the peer-released wait time per blocking stack, so that <see cref="NameByCallSite"/> can name it after the
/// pass by the call site its waiters block at (docs/metrics.md#wake-chain-call-site).
/// </summary>
internal sealed class WakeChainTracker(ConvoyAnalyzer convoys, ThreadAccounting accounting)
{
    /// <summary>
    /// A holder that releases the next waiter later than this after it was released itself ends the episode. Longer
    /// than a futex convoy's <see cref="ConvoyAnalyzer.MaxHoldNs"/>: a wake-chain lock is typically held for a whole
    /// unit of work (a transaction up to its commit), and the serialization of those units is what it reports.
    /// </summary>
    public const long MaxHoldNs = 100_000_000;

    /// <summary>First waiter of a wait object; this value once a second thread waited on it.</summary>
    private const int Shared = -1;

    private const string ThreadPeers = "released by peer threads", ProcessPeers = "released by peer processes";
    private readonly ConvoyAnalyzer _convoys = convoys;
    private readonly ThreadAccounting _accounting = accounting;
    private SlotTable<ChainThread> _threads = new(static (_, slot) => new ChainThread(slot));
    private readonly Dictionary<WakeChainWaitObject, int> _firstWaiter = new();
    private readonly Dictionary<(int Program, int Syscall, int Operation, int Kind), int> _keys = new();
    private readonly Dictionary<string, int> _programs = new(StringComparer.Ordinal);
    /// <summary>Thread kinds (<see cref="KindOf"/>), numbered from 1; <see cref="_kindNames"/> by id - 1.</summary>
    private readonly Dictionary<string, int> _kinds = new(StringComparer.Ordinal);
    private readonly List<string> _kindNames = [];
    /// <summary>(thread name, program) → kind, so that a release costs one lookup and no string made.</summary>
    private readonly Dictionary<(string Name, int Program), int> _kindOfName = new();
    /// <summary>Program names by id (<see cref="ProgramOf"/>), index id - 1.</summary>
    private readonly List<string> _programNames = [];
    private readonly List<LockObjectStats> _objects = [];
    /// <summary>Per lock (key): what its name is made of, until the call site is known.</summary>
    private readonly List<ChainName> _names = [];
    /// <summary>Per lock (key): peer-released wait time in the region by blocking stack id (null: none seen).</summary>
    private readonly List<Dictionary<int, long>?> _blockingStacks = [];
    /// <summary>Keys named "released by peer processes" whose releases were not yet seen inside one process.</summary>
    private readonly HashSet<int> _namedProcesses = [];

    private sealed class ChainThread(int slot)
    {
        public readonly int Slot = slot;
        /// <summary>0: not looked up yet; &gt; 0 a named program; &lt; 0 an unnamed process (negated pid).</summary>
        public int Program;
        public bool InWait;
        public bool Blocked;
        public int Syscall;
        public int Operation;
        public WakeChainWaitObject WaitObj;
        public long EnterTs;
        /// <summary>The stack of the switch-out that blocked it in this wait (0: none recorded).</summary>
        public int BlockStack;
        /// <summary>Where it stands in a wait's queue.</summary>
        public QueuePlace Queue;
        /// <summary>The release by a peer that it has not yet turned into a handoff.</summary>
        public PendingRelease Release;
    }

    /// <summary>A thread's place in the queue of one wait.</summary>
    private struct QueuePlace
    {
        /// <summary>When this thread joined the queue: kept across lost races (it still waits for the lock).</summary>
        public long Start;
        /// <summary>The wait (syscall, operation) <see cref="Start"/> belongs to: a queue of another wait is not
        /// this one's (a backend released from its row-lock wait then waiting for an LWLock).</summary>
        public int Syscall, Operation;
    }

    /// <summary>A release of a thread by a peer, from the waking to the thread running with it.</summary>
    private struct PendingRelease
    {
        public bool Pending;
        public int Key;
        public int Giver;
        public int GiverSlot;
        public long QueuedAt;
        public long WokenAt;
        public bool Ran;
        public long RunningAt;
    }

    public void OnSyscallEnter(in KernelEvent e, int slot)
    {
        var t = _threads.At(slot, e.CurrentTid);
        Running(t, e.Timestamp);
        var process = _accounting.Lineage.ProcessOf(e.CurrentTid, slot);
        if (!WakeChainWaits.IsWait(e, process, out var op, out var obj)) return;
        t.InWait = true;
        t.Blocked = false;
        t.Syscall = obj.Syscall;
        t.Operation = op;
        t.WaitObj = obj;
        t.EnterTs = e.Timestamp;
        t.BlockStack = 0;
    }

    public void OnSyscallExit(in KernelEvent e, int slot)
    {
        if (_threads.Find(slot) is not { InWait: true } t) return;
        t.InWait = false;
        // Ended by something other than a peer (a client, a timeout): the thread is no longer queued for this wait.
        if ((!t.Release.Pending || t.Release.WokenAt < t.EnterTs) && t.Queue.Syscall == t.Syscall
            && t.Queue.Operation == t.Operation)
            t.Queue.Start = 0;
    }

    public void OnSwitch(in KernelEvent e, int prevSlot, int nextSlot)
    {
        if (e.PrevTid > 0 && _threads.Find(prevSlot) is { InWait: true, Blocked: false } p
            && !TaskState.IsPreempted(e.PrevState))
        {
            p.Blocked = true;
            p.BlockStack = e.StackId;
            ref var first = ref System.Runtime.InteropServices.CollectionsMarshal.GetValueRefOrAddDefault(
                _firstWaiter, p.WaitObj, out var exists);
            if (!exists) first = e.PrevTid;
            else if (first != e.PrevTid) first = Shared;
        }
        if (e.NextTid > 0 && _threads.Find(nextSlot) is { } n) Running(n, e.Timestamp);
    }

    public void OnWaking(in KernelEvent e, int giverSlot, int wokenSlot)
    {
        var woken = e.WokenTid;
        var giver = e.CurrentTid;
        if (woken <= 0 || giver <= 0 || giver == woken || EventFlags.InInterrupt(e.Flags)) return;
        if (_threads.Find(wokenSlot) is not { InWait: true } b) return;
        if (_firstWaiter.TryGetValue(b.WaitObj, out var first) && first == Shared) return;
        var program = ProgramOf(b, woken);
        var g = _threads.At(giverSlot, giver);
        if (ProgramOf(g, giver) != program) return;
        var lineage = _accounting.Lineage;
        var samePeers = lineage.ProcessOf(woken, wokenSlot) == lineage.ProcessOf(giver, giverSlot);
        var kind = samePeers
            ? KindOf(woken, e.Timestamp, program)
            : 0;
        var key = KeyOf(program, b.Syscall, b.Operation, kind, woken, giver);
        // The process of a thread older than the capture may be known only after the first releases (a `--pid`
        // server's threads are listed once the capture runs): a release inside one process names the peers threads.
        if (_namedProcesses.Count > 0 && _namedProcesses.Contains(key) && samePeers)
        {
            _namedProcesses.Remove(key);
            _names[key] = _names[key] with { Peers = ThreadPeers };
            _objects[key].Name = _names[key].ToString();
        }
        if (g.Release.Pending && g.Release.Key == key)
        {
            g.Release.Pending = false;
            g.Queue.Start = 0;
            _convoys.ConfirmChain(
                new Handoff(LockObjectOf(key), g.Release.Giver, giver, g.Release.QueuedAt, g.Release.WokenAt,
                g.Release.Ran ? g.Release.RunningAt : g.Release.WokenAt, e.Timestamp), giverSlot, g.Release.GiverSlot);
        }
        var ts = e.Timestamp;
        // Released again by a peer before it released anyone: the earlier release went to a waiter that got the
        // lock first, and this one queued again.
        if (b.Release.Pending && b.Release.Key == key && _accounting.Region.Contains(ts)) _objects[key].LostRaces++;
        if (b.Queue.Start == 0 || b.Queue.Syscall != b.Syscall || b.Queue.Operation != b.Operation)
        {
            b.Queue.Start = b.EnterTs;
            b.Queue.Syscall = b.Syscall;
            b.Queue.Operation = b.Operation;
        }
        b.Release.Pending = true;
        b.Release.Key = key;
        b.Release.Giver = giver;
        b.Release.GiverSlot = giverSlot;
        b.Release.QueuedAt = b.Queue.Start;
        b.Release.WokenAt = ts;
        // Woken before it got off the CPU: it is already running.
        b.Release.Ran = !b.Blocked;
        b.Release.RunningAt = ts;
        if (b.Blocked && _accounting.Region.Contains(ts))
        {
            var stats = _objects[key];
            stats.BlockingWaits++;
            var waited = _accounting.Region.Overlap(b.EnterTs, ts);
            stats.PeerReleasedWaitNs += waited;
            stats.Waiters.Add(woken);
            if (b.BlockStack != 0)
            {
                var stacks = _blockingStacks[key] ??= new Dictionary<int, long>();
                stacks[b.BlockStack] = stacks.GetValueOrDefault(b.BlockStack) + waited;
            }
        }
    }

    private static void Running(ChainThread t, long ts)
    {
        if (!t.Release.Pending || t.Release.Ran) return;
        t.Release.Ran = true;
        t.Release.RunningAt = ts;
    }

    private static LockObject LockObjectOf(int key) => new(LockObjectKind.WakeChain, key);

    private int ProgramOf(ChainThread t, int tid)
    {
        if (t.Program != 0) return t.Program;
        var process = _accounting.Lineage.ProcessOf(tid);
        var names = _accounting.Names;
        if (names is not null && (names.TryGetName(process, out var name) || names.TryGetName(tid, out name)))
        {
            if (!_programs.TryGetValue(name, out var id))
            {
                _programs[name] = id = _programs.Count + 1;
                _programNames.Add(name);
            }
            return t.Program = id;
        }
        return t.Program = -Math.Max(1, process);
    }

    private static readonly char[] Digits = "0123456789".ToCharArray();

    /// <summary>
    /// Threads of one process that release one another are told apart by kind (docs/metrics.md#wake-chain-kind): a
    /// runtime parks its own idle threads (a JVM's compiler and GC threads) in the same call as the threads queueing
    /// on a lock, and one chain of both is judged by the idle ones' time. The kind is the woken thread's name at the
    /// release, without its trailing number ("worker-3": "worker-"): the name at the event's time
    /// (<see cref="ThreadTable.TryGetNameAt"/>), so the key is the same however far ahead of the analysis the reader
    /// ran. 0 (no kind) without a name by then, or for a thread named like its program (not renamed: a C program's
    /// threads, which so keep the key they always had). Between processes it is not used: PostgreSQL's backends are
    /// one kind.
    /// </summary>
    private int KindOf(int tid, long at, int program)
    {
        var names = _accounting.Names;
        if (names is null || !names.TryGetNameAt(tid, at, out var name)) return 0;
        if (_kindOfName.TryGetValue((name, program), out var id)) return id;
        var kind = name.TrimEnd(Digits);
        var programName = program > 0 ? _programNames[program - 1] : null;
        if (programName is not null && programName.TrimEnd(Digits) == kind) id = 0;
        else if (!_kinds.TryGetValue(kind, out id))
        {
            _kinds[kind] = id = _kinds.Count + 1;
            _kindNames.Add(kind);
        }
        _kindOfName[(name, program)] = id;
        return id;
    }

    private int KeyOf(int program, int syscall, int operation, int kind, int woken, int giver)
    {
        if (_keys.TryGetValue((program, syscall, operation, kind), out var key)) return key;
        key = _objects.Count;
        _keys[(program, syscall, operation, kind)] = key;
        var programName = program > 0
            ? _programNames[program - 1]
            : "process " + (-program).ToString(System.Globalization.CultureInfo.InvariantCulture);
        var peers =
            _accounting.Lineage.ProcessOf(woken) == _accounting.Lineage.ProcessOf(giver) ? ThreadPeers : ProcessPeers;
        if (peers == ProcessPeers) _namedProcesses.Add(key);
        var threads = kind == 0 ? null : _kindNames[kind - 1];
        var name = new ChainName(WakeChainWaits.Describe(syscall, operation), programName, threads, peers, Site: null);
        _names.Add(name);
        _blockingStacks.Add(null);
        _objects.Add(_convoys.ChainObject(LockObjectOf(key), name.ToString(), MaxHoldNs));
        return key;
    }

    /// <summary>The earliest wake of a release not yet turned into a handoff; <see cref="long.MaxValue"/> when none.
    /// </summary>
    public long EarliestPendingRelease()
    {
        var earliest = long.MaxValue;
        foreach (var (_, t) in _threads.InOrder)
            if (t.Release.Pending && t.Release.WokenAt < earliest) earliest = t.Release.WokenAt;
        return earliest;
    }

    /// <summary>The region opened: the blocking stacks' time, like the objects' figures, counts from here.</summary>
    public void OnRegionBegin()
    {
        for (var key = 0; key < _blockingStacks.Count; key++) _blockingStacks[key]?.Clear();
    }

    /// <summary>
    /// After the pass, once stacks can be named: each lock whose released waits carried blocking stacks is named by
    /// the call site under which most of that wait time blocked (<paramref name="siteOf"/> names a stack id's site,
    /// null when it names none), and keeps that site and its share of the lock's peer-released wait time.
    /// </summary>
    public void NameByCallSite(Func<int, string?> siteOf)
    {
        for (var key = 0; key < _objects.Count; key++)
        {
            if (_blockingStacks[key] is not { } stacks) continue;
            var bySite = new Dictionary<string, long>(StringComparer.Ordinal);
            foreach (var (stack, ns) in stacks)
                if (siteOf(stack) is { } site) bySite[site] = bySite.GetValueOrDefault(site) + ns;
            if (bySite.Count == 0) continue;
            var (top, topNs) = bySite.OrderByDescending(s => s.Value).ThenBy(s => s.Key, StringComparer.Ordinal)
                .First();
            var stats = _objects[key];
            _names[key] = _names[key] with { Site = top };
            stats.Name = _names[key].ToString();
            stats.CallSite = top;
            stats.CallSiteShare = stats.PeerReleasedWaitNs > 0 ? (double)topNs / stats.PeerReleasedWaitNs : null;
        }
    }

    /// <summary>
    /// A wake-chain lock's name: "epoll_wait waits in postgres[ at SITE,] released by peer processes (wake chain)".
    /// </summary>
    /// <param name="Threads">The woken threads' kind ("worker-"); null when not told apart by kind.</param>
    private readonly record struct ChainName(string Wait, string Program, string? Threads, string Peers, string? Site)
    {
        private string Who => Threads is null ? Program : $"{Program}'s {Threads}* threads";

        public override string ToString() => Site is null
            ? $"{Wait} waits in {Who} {Peers} (wake chain)"
            : $"{Wait} waits in {Who} at {Site}, {Peers} (wake chain)";
    }
}
