using TraceLab.Analyzers;
using TraceLab.Analyzers.Locks;
using TraceLab.Core;
using TraceLab.Core.Syscalls;
using static TraceLab.Tests.Analyzers.LockEvents;

namespace TraceLab.Tests.Analyzers;

/// <summary>
/// Locks found through their wake chains (docs/metrics.md#wake-chains) on hand-built traces: four single-threaded
/// processes named "srv" each park in epoll_wait on an epoll fd of their own and release one another with kill, the
/// way PostgreSQL's backends pass a row lock; "cli" is a client of another program. Answers worked out in comments.
/// </summary>
public sealed class WakeChainTests
{
    private const int A = 201, B = 202, C = 203, D = 204, X = 299;
    private const int Epfd = 3;

    private static KernelEvent Epoll(long ts, int tid) => Enter(ts, 0, tid, LinuxSyscalls.EpollWait, Epfd);
    private static KernelEvent EpollDone(long ts, int tid) => Exit(ts, 0, tid, LinuxSyscalls.EpollWait, 1);
    private static KernelEvent Kill(long ts, int tid, int target) => Enter(ts, 0, tid, LinuxSyscalls.Kill, target);
    private static KernelEvent KillDone(long ts, int tid) => Exit(ts, 0, tid, LinuxSyscalls.Kill);
    private static KernelEvent Sw(long ts, int prev, long state, int next) =>
        KernelEvent.Switch(ts, 0, prev, 120, state, next, 120);
    private static KernelEvent Wake(long ts, int waker, int woken) => KernelEvent.Waking(ts, 0, waker, woken, 0);

    /// <summary>B, C, D queue; A releases B, B releases C, C releases D, D releases B (never confirmed).</summary>
    private static List<KernelEvent> Chain(bool lostRace) =>
    [
        Sw(90, 0, R, B),
        Epoll(100, B), Sw(101, B, S, C),                                    // B queued at 100
        Epoll(110, C), Sw(111, C, S, D),                                    // C queued at 110
        Epoll(120, D), Sw(121, D, S, A),                                    // D queued at 120
        Kill(200, A, B), Wake(201, A, B), KillDone(202, A),                 // A releases B
        Epoll(203, A), Sw(204, A, S, B), EpollDone(206, B),                 // B running at 204
        Kill(300, B, C), Wake(301, B, C), KillDone(302, B),                 // #1 A→B confirmed: 100, 201, 204
        .. lostRace ? [Kill(303, B, D), Wake(304, B, D), KillDone(305, B)] : Array.Empty<KernelEvent>(),
        Epoll(306, B), Sw(307, B, S, C), EpollDone(308, C),                 // C running at 307
        Epoll(310, C), Sw(311, C, S, X),                                    // C waits for its client
        Wake(320, X, C), Sw(321, X, S, C), EpollDone(322, C),               // the client is no peer
        // D lost the race: it runs on CPU 1 and parks in the same wait again.
        .. lostRace
            ? [KernelEvent.Switch(323, 1, 0, 120, R, D, 120), Exit(324, 1, D, LinuxSyscalls.EpollWait, 1),
                Enter(325, 1, D, LinuxSyscalls.EpollWait, Epfd), KernelEvent.Switch(326, 1, D, 120, S, 0, 120)]
            : Array.Empty<KernelEvent>(),
        Kill(400, C, D), Wake(401, C, D), KillDone(402, C),                 // #2 B→C confirmed: 110, 301, 307
        Epoll(403, C), Sw(404, C, S, D), EpollDone(406, D),                 // D running at 404
        Kill(500, D, B), Wake(501, D, B), KillDone(502, D),                 // #3 C→D confirmed: 120, 401, 404
    ];

    private static ConvoyAnalyzer Run(IEnumerable<KernelEvent> events)
    {
        var names = new ThreadTable();
        foreach (var tid in new[] { A, B, C, D }) names.SetName(tid, "srv");
        names.SetName(X, "cli");
        var accounting = new ThreadAccounting { Names = names };
        var convoys = new ConvoyAnalyzer(accounting);
        var pass = new AnalysisPass(accounting, convoys);
        foreach (var e in events) pass.OnEvent(e);
        pass.Complete();
        return convoys;
    }

    [Fact]
    public void Peers_releasing_one_another_from_waits_of_their_own_are_one_lock_with_a_convoy_episode()
    {
        var c = Run(Chain(lostRace: false));
        var o = Assert.Single(c.Objects);
        Assert.Equal(LockObjectKind.WakeChain, o.Object.Kind);
        Assert.Equal("epoll_wait waits in srv released by peer processes (wake chain)", o.Name);
        Assert.Equal(3, o.Handoffs);
        Assert.Equal(1, o.Episodes);
        Assert.Equal(3, o.LongestChain);
        Assert.Equal(3, o.HandoffsInConvoys);
        Assert.Equal(404 - 201, o.ConvoyNs);                    // first release → last new holder running
        Assert.Equal(4, o.BlockingWaits);                       // B, C, D, B released while off the CPU
        Assert.Equal(0, o.LostRaces);
        Assert.Equal((201 - 100) + (301 - 110) + (401 - 120), o.QueueWait.Sum);
        Assert.Equal((204 - 201) + (307 - 301) + (404 - 401), o.HandoffGap.Sum);
        Assert.Equal(new[] { A, B, C, D }, o.Participants.Order());
        Assert.Equal(204 - 100, c.Threads[B].TimeInConvoyNs);
        Assert.Equal(307 - 110, c.Threads[C].TimeInConvoyNs);
        Assert.Equal(404 - 120, c.Threads[D].TimeInConvoyNs);
        Assert.False(c.Threads.ContainsKey(X));
    }

    [Fact]
    public void A_chain_with_blocking_stacks_is_named_by_the_call_site_under_which_most_of_its_queued_time_blocked()
    {
        // B and C block under stack 7 (site "lock_a"), D and B's second wait under 8 ("lock_b"). Released blocked
        // waits: B 100→201 (7), C 110→301 (7), D 120→401 (8), B 306→501 (8): 101 + 191 under 7, 281 + 195 under 8.
        var stackOf = new Dictionary<(long, int), int>
        {
            [(101, B)] = 7,
            [(111, C)] = 7,
            [(121, D)] = 8,
            [(307, B)] = 8,
        };
        var events = Chain(lostRace: false).Select(e => e.Kind == KernelEventKind.Switch
            && stackOf.TryGetValue((e.Timestamp, e.PrevTid), out var id) ? e.WithStack(id) : e).ToList();
        var c = Run(events);
        var o = Assert.Single(c.Objects);
        Assert.Equal(101 + 191 + 281 + 195, o.PeerReleasedWaitNs);
        Assert.Null(o.CallSite);

        c.NameWakeChainsByCallSite(id => id switch { 7 => "lock_a ← worker", 8 => "lock_b ← worker", _ => null });
        Assert.Equal("lock_b ← worker", o.CallSite);
        Assert.Equal((281 + 195) / (double)(101 + 191 + 281 + 195), o.CallSiteShare!.Value, 1e-12);
        Assert.Equal("epoll_wait waits in srv at lock_b ← worker, released by peer processes (wake chain)", o.Name);

        // Stacks that name one site add up; stacks that name none leave the chain as it was named.
        c = Run(events);
        c.NameWakeChainsByCallSite(_ => "lock ← worker");
        Assert.Equal(1.0, Assert.Single(c.Objects).CallSiteShare);
        c = Run(events);
        c.NameWakeChainsByCallSite(_ => null);
        Assert.Equal("epoll_wait waits in srv released by peer processes (wake chain)", Assert.Single(c.Objects).Name);
        Assert.Null(Assert.Single(c.Objects).CallSite);
    }

    [Fact]
    public void A_waiter_released_again_before_it_released_anyone_lost_the_race_and_stays_queued()
    {
        var c = Run(Chain(lostRace: true));
        var o = Assert.Single(c.Objects);
        Assert.Equal(3, o.Handoffs);
        Assert.Equal(1, o.LostRaces);                            // B released D at 304, C released it again at 401
        Assert.Equal(1, o.Episodes);
        Assert.Equal(404 - 120, c.Threads[D].TimeInConvoyNs);   // queued since its first wait
    }

    [Fact]
    public void A_queue_belongs_to_its_wait_a_thread_released_from_one_wait_queues_anew_in_another()
    {
        // B is released from its epoll_wait (queued since 100), then parks on a futex of its own at 210 and is
        // released from that by C at 301; it releases A's futex at 311, confirming C→B: queued 210, not 100.
        List<KernelEvent> events =
        [
            Sw(90, 0, R, B),
            Epoll(100, B), Sw(101, B, S, A),
            Kill(200, A, B), Wake(201, A, B), KillDone(202, A),
            Futex(203, A, 0x500, FutexWait), Sw(204, A, S, B), EpollDone(205, B),
            Futex(210, B, 0x600, FutexWait), Sw(211, B, S, C),
            Futex(300, C, 0x600, FutexWake), Wake(301, C, B), FutexDone(302, C, 1), Sw(303, C, S, B),
            FutexDone(304, B), Futex(310, B, 0x500, FutexWake), Wake(311, B, A), FutexDone(312, B, 1),
        ];
        var chains = Run(events).Objects.Where(o => o.Object.Kind == LockObjectKind.WakeChain).ToList();
        var futex = Assert.Single(chains, o => o.Handoffs > 0);
        Assert.Equal("futex WAIT waits in srv released by peer processes (wake chain)", futex.Name);
        Assert.Equal(1, futex.Handoffs);
        Assert.Equal(301 - 210, futex.QueueWait.Sum);
    }

    [Fact]
    public void Releases_by_another_program_are_no_handoffs()
    {
        // Every release comes from the client program: no chain.
        List<KernelEvent> events =
        [
            Sw(90, 0, R, B),
            Epoll(100, B), Sw(101, B, S, C),
            Epoll(110, C), Sw(111, C, S, X),
            Wake(200, X, B), Wake(201, X, C), Sw(202, X, S, B), EpollDone(203, B),
            Kill(300, B, C), KillDone(302, B), Sw(303, B, S, C), EpollDone(304, C),
        ];
        Assert.Empty(Run(events).Objects);
    }

    [Fact]
    public void Waiters_on_one_shared_futex_are_left_to_the_futex_convoy()
    {
        // B and C block on one shared futex word (no FUTEX_PRIVATE_FLAG: one object across processes): a shared lock
        // object, named by the convoy analysis, not a wake chain.
        const long Word = 0x7000;
        const int SharedWait = 0, SharedWake = 1;
        List<KernelEvent> events =
        [
            Sw(90, 0, R, B),
            Futex(100, B, Word, SharedWait), Sw(101, B, S, C),
            Futex(110, C, Word, SharedWait), Sw(111, C, S, A),
            Futex(200, A, Word, SharedWake), Wake(201, A, B), FutexDone(202, A, 1), Sw(203, A, S, B),
            FutexDone(204, B), Futex(300, B, Word, SharedWake), Wake(301, B, C), FutexDone(302, B, 1),
        ];
        var c = Run(events);
        Assert.DoesNotContain(c.Objects, o => o.Object.Kind == LockObjectKind.WakeChain);
    }

    /// <summary>
    /// Threads of one process ("app", leader 400) park in futex waits of their own and release one another: three
    /// workers pass a lock around (worker-1 → worker-2 → worker-3 → worker-1), and two idle helpers wake each other.
    /// Keyed by program and wait alone they would be one chain; the woken thread's kind (its name at the release,
    /// without the number) keeps them apart. worker-3 is named "app" until 250: its release at 200 (before the
    /// rename) is of kind "app", its release at 500 of kind "worker-".
    /// </summary>
    [Fact]
    public void Threads_of_one_process_are_told_apart_by_kind_by_their_names_at_each_release()
    {
        const int Leader = 400, W1 = 401, W2 = 402, W3 = 403, H1 = 411, H2 = 412;
        const int Wait = 128; // FUTEX_WAIT | FUTEX_PRIVATE_FLAG
        var names = new ThreadTable();
        names.SetName(Leader, "app", 0);
        names.SetName(W1, "worker-1", 0);
        names.SetName(W2, "worker-2", 0);
        names.SetName(W3, "app", 0);
        names.SetName(W3, "worker-3", 250);
        names.SetName(H1, "helper-1", 0);
        names.SetName(H2, "helper-2", 0);
        KernelEvent Park(long ts, int tid) => Futex(ts, tid, 0x1000 + tid, Wait);
        List<KernelEvent> events =
        [
            .. new[] { W1, W2, W3, H1, H2 }.Select((t, i) => KernelEvent.Fork(1 + i, 0, Leader, t, ForkChild.Thread)),
            Sw(10, 0, R, W2), Park(11, W2), Sw(12, W2, S, W3),               // worker-2 queues
            Park(13, W3), Sw(14, W3, S, H1),                                 // worker-3 queues
            Park(15, H1), Sw(16, H1, S, H2), Park(17, H2), Sw(18, H2, S, W1), // the helpers idle
            Wake(100, W1, W2), Park(101, W1), Sw(102, W1, S, W2),            // worker-1 releases worker-2
            FutexDone(103, W2), Wake(200, W2, W3),                           // worker-2 releases worker-3 ("app")
            Park(201, W2), Sw(202, W2, S, W3), FutexDone(203, W3),
            Wake(300, W3, W1), Park(301, W3), Sw(302, W3, S, W1),            // worker-3 releases worker-1
            FutexDone(303, W1), Wake(400, W1, H1), Park(401, W1),            // worker-1 wakes a helper
            Sw(402, W1, S, H1), FutexDone(403, H1), Wake(410, H1, H2),       // which wakes the other
            Park(411, H1), Sw(412, H1, S, H2), FutexDone(413, H2),
            Wake(420, H2, W3), Park(421, H2), Sw(422, H2, S, W2),            // a helper releases worker-3
            FutexDone(423, W2), Wake(500, W2, W3), Park(501, W2),            // worker-2 releases worker-3
            Sw(502, W2, S, W3), FutexDone(503, W3),
        ];
        var accounting = new ThreadAccounting { Names = names };
        var convoys = new ConvoyAnalyzer(accounting);
        var pass = new AnalysisPass(accounting, convoys);
        foreach (var e in events) pass.OnEvent(e);
        pass.Complete();

        var chains = convoys.Objects.Where(o => o.Object.Kind == LockObjectKind.WakeChain)
            .ToDictionary(o => o.Name!, o => o);
        Assert.Equal(
            [
                "futex WAIT waits in app released by peer threads (wake chain)",
                "futex WAIT waits in app's helper-* threads released by peer threads (wake chain)",
                "futex WAIT waits in app's worker-* threads released by peer threads (wake chain)",
            ],
            chains.Keys.Order(StringComparer.Ordinal));
        // Workers: blocked releases of worker-2 (100), worker-1 (300), worker-3 (420 by a helper, 500). worker-2's
        // release at 200 went to a thread of kind "app" (another key), so the release of worker-2 at 100 is confirmed
        // only at 500, when worker-2 releases worker-3 again: one handoff, worker-1 → worker-2. worker-3, released at
        // 420 and again at 500 before it released anyone, lost a race.
        var workers = chains["futex WAIT waits in app's worker-* threads released by peer threads (wake chain)"];
        Assert.Equal(4, workers.BlockingWaits);
        Assert.Equal(new[] { W1, W2, W3 }, workers.Waiters.Order());
        Assert.Equal(1, workers.Handoffs);
        Assert.Equal(1, workers.LostRaces);
        Assert.Equal(new[] { W1, W2 }, workers.Participants.Order());
        var helpers = chains["futex WAIT waits in app's helper-* threads released by peer threads (wake chain)"];
        Assert.Equal(new[] { H1, H2 }, helpers.Waiters.Order());
        Assert.Equal(1, helpers.Handoffs);                                  // W1 → H1 confirmed when H1 woke H2
        // Before its rename worker-3 was of its program's kind, and that chain keeps the program's plain name.
        var early = chains["futex WAIT waits in app released by peer threads (wake chain)"];
        Assert.Equal(new[] { W3 }, early.Waiters.Order());
    }
}
