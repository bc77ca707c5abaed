using System.Globalization;
using System.Text;
using TraceLab.Analyzers;
using TraceLab.Analyzers.Findings;
using TraceLab.Analyzers.Kernel;
using TraceLab.Analyzers.Locks;
using TraceLab.Analyzers.Smp;
using TraceLab.Analyzers.Wakeups;
using TraceLab.Cli;
using TraceLab.Core;
using TraceLab.Core.Syscalls;
using static TraceLab.Tests.Analyzers.LockEvents;

namespace TraceLab.Tests.Analyzers;

/// <summary>
/// <see cref="AnalysisPass"/> switches on the event kind once and hands the built-in analyzers the thread slots the
/// accounting resolved; each analyzer's own <see cref="IKernelEventSink.OnEvent"/> decides the kind and looks the
/// slots up itself. Both routes must give the same results on every event stream: real captures and a hand-built
/// one full of the odd cases (broken switch chains, interrupt context, pid 0 and -1, a CPU first seen through an
/// evidence-only event, fork/exit/migrate/wakeup_new, the region markers).
/// </summary>
public sealed class AnalysisPassDispatchTests
{
    /// <summary>Hides an analyzer's type from the pass, so it gets every event through its generic OnEvent.</summary>
    private sealed class Generic(IKernelAnalyzer inner) : IKernelAnalyzer
    {
        public void OnEvent(in KernelEvent e) => inner.OnEvent(e);
        public void OnRegionBegin() => inner.OnRegionBegin();
        public void Complete(long end) => inner.Complete(end);
    }

    private sealed class Run : IKernelEventSink
    {
        private readonly AnalysisPass _pass;

        public Run(bool perKind)
        {
            var accounting = new ThreadAccounting();
            Kernel = new KernelTimeAnalyzer(accounting);
            Convoys = new ConvoyAnalyzer(accounting);
            Wakeups = new WakeupAnalyzer(accounting);
            Smp = new SmpAnalyzer(accounting);
            Findings = new FindingEvidenceAnalyzer(accounting);
            IKernelAnalyzer[] all = [Kernel, Convoys, Wakeups, Smp, Findings];
            _pass = new AnalysisPass(accounting, perKind ? all : [.. all.Select(a => (IKernelAnalyzer)new Generic(a))]);
        }

        public KernelTimeAnalyzer Kernel { get; }
        public ConvoyAnalyzer Convoys { get; }
        public WakeupAnalyzer Wakeups { get; }
        public SmpAnalyzer Smp { get; }
        public FindingEvidenceAnalyzer Findings { get; }

        public void OnEvent(in KernelEvent e) => _pass.OnEvent(e);

        public string Complete()
        {
            _pass.Complete();
            return Dump(_pass.Accounting, Kernel, Convoys, Wakeups, Smp) + Dump(Findings.Result());
        }
    }

    [Theory]
    [InlineData("timemutex-mutex/trace.dat")]
    [InlineData("timemutex-cs/trace.dat")]
    [InlineData("perf-timemutex-mutex/capture.perf.data")]
    public void Per_kind_dispatch_gives_the_same_results_as_each_analyzers_own_switch_on_a_sample_capture(string sample)
    {
        var path = Path.Combine(RepoPaths.SampleTraces, sample);
        var perKind = new Run(perKind: true);
        var generic = new Run(perKind: false);
        using (var reader = TraceFiles.Open(path)) reader.Read(perKind);
        using (var reader = TraceFiles.Open(path)) reader.Read(generic);
        var expected = generic.Complete();
        Assert.Equal(expected, perKind.Complete());
        // Not vacuous: the capture exercises every analyzer.
        Assert.NotEmpty(perKind.Kernel.Threads);
        Assert.Contains(perKind.Convoys.Objects, o => o.Handoffs > 0);
        Assert.Contains(perKind.Wakeups.Threads.Values, w => w.Wakeups > 0);
        Assert.Contains(perKind.Findings.Result().Objects.Values, o => o.BlockedNs.Values.Sum() > 0);
    }

    [Fact]
    public void Per_kind_dispatch_gives_the_same_results_on_broken_chains_interrupts_and_rare_kinds()
    {
        var perKind = new Run(perKind: true);
        var generic = new Run(perKind: false);
        foreach (var e in OddStream())
        {
            perKind.OnEvent(e);
            generic.OnEvent(e);
        }
        var expected = generic.Complete();
        Assert.Equal(expected, perKind.Complete());
        Assert.True(perKind.Convoys.Objects.Sum(o => o.Handoffs) > 0);
        Assert.Contains(perKind.Smp.Cpus, c => c.Seen && c.Cpu == 4);
    }

    /// <summary>
    /// A semaphore convoy over two CPUs, with every irregularity the dispatch has to route the same way.
    /// </summary>
    private static IEnumerable<KernelEvent> OddStream()
    {
        const int A = 101, B = 102, C = 103;
        const byte HardIrq = EventFlags.HardIrq;
        var nr = LinuxSyscalls.Semtimedop;
        long t = 1000;
        // CPU 3's first event is an evidence-only one from pid -1 (the accounting's "unknown" task), then pid 0 (idle)
        // in interrupt context; CPU 4 logs nothing else.
        yield return new KernelEvent { Timestamp = t++, Cpu = 3, CurrentTid = -1, Kind = KernelEventKind.Other };
        // CPU 4's only event
        yield return new KernelEvent { Timestamp = t++, Cpu = 4, CurrentTid = -1, Kind = KernelEventKind.Other };
        yield return new KernelEvent
        {
            Timestamp = t++,
            Cpu = 3,
            CurrentTid = -1,
            Kind = KernelEventKind.SyscallEnter,
            SyscallNr = 0
        };
        yield return Enter(t++, 3, 0, nr, 7).WithFlags(HardIrq);
        yield return KernelEvent.Fork(t++, 0, A, B);
        yield return KernelEvent.Fork(t++, 0, A, C);
        yield return KernelEvent.WakeupNew(t++, 0, A, B, 1);
        yield return KernelEvent.Marker(t++, 0, A, MeasuredRegion.BeginMarker);
        for (var round = 0; round < 20; round++)
        {
            // A holds the semaphore on CPU 0; B and C queue on it from CPU 1.
            yield return Enter(t += 10, 0, A, nr, 7);
            yield return Exit(t += 10, 0, A, nr);
            yield return Enter(t += 10, 1, B, nr, 7);
            yield return KernelEvent.Switch(t += 10, 1, B, 120, S, C, 120);
            yield return Enter(t += 10, 1, C, nr, 7);
            yield return KernelEvent.Switch(t += 10, 1, C, 120, S, 0, 120);
            // A releases: wakes B (a handoff), from an interrupt every third round (no giver then).
            yield return Enter(t += 10, 0, A, nr, 7);
            var waking = KernelEvent.Waking(t += 10, 0, A, B, 1);
            yield return round % 3 == 0 ? waking.WithFlags(HardIrq) : waking;
            yield return Exit(t += 10, 0, A, nr);
            yield return KernelEvent.Switch(t += 10, 1, 0, 120, R, B, 120);
            yield return Exit(t += 10, 1, B, nr);
            // B's release wakes C; C's switch-in is not logged every other round (a broken chain, repaired).
            yield return Enter(t += 10, 1, B, nr, 7);
            yield return KernelEvent.Waking(t += 10, 1, B, C, 1);
            yield return Exit(t += 10, 1, B, nr);
            yield return KernelEvent.Switch(t += 10, 1, B, 120, round % 2 == 0 ? S : R, round % 2 == 0 ? C : 0, 120);
            yield return Exit(t += 10, 1, C, nr);
            yield return new KernelEvent { Timestamp = t += 10, Cpu = 1, CurrentTid = C, Kind = KernelEventKind.Exec };
            // C gives the semaphore back to A, waking it on the other CPU (woken while running: spurious).
            yield return Enter(t += 10, 1, C, nr, 7);
            yield return KernelEvent.Waking(t += 10, 1, C, A, 0);
            yield return Exit(t += 10, 1, C, nr);
            yield return KernelEvent.Migrate(t += 10, 1, C, C, 1, 0);
            yield return KernelEvent.Switch(t += 10, 1, C, 120, S, 0, 120);
            // Events on CPU 2 from a thread no switch ever named there.
            yield return new KernelEvent { Timestamp = t += 10, Cpu = 2, CurrentTid = B, Kind = KernelEventKind.Other };
            yield return KernelEvent.Switch(t += 10, 2, B, 120, S, 0, 120);
        }
        yield return KernelEvent.Exit(t += 10, 1, C);
        yield return KernelEvent.Switch(t += 10, 1, C, 120, TaskState.ExitDead, 0, 120);
        yield return KernelEvent.Marker(t += 10, 0, A, MeasuredRegion.EndMarker);
        yield return Enter(t += 10, 0, A, nr, 7);
    }

    private static string Dump(ThreadAccounting acc, KernelTimeAnalyzer kernel, ConvoyAnalyzer convoys,
        WakeupAnalyzer wakeups, SmpAnalyzer smp)
    {
        var sb = new StringBuilder();
        void Line(params object?[] values) =>
            sb.AppendLine(string.Join(' ', values.Select(v => Convert.ToString(v, CultureInfo.InvariantCulture))));
        string H(LatencyHistogram h) => $"[{h.Count} {h.Sum} {h.Min} {h.Max} {h.Percentile(50)} {h.Percentile(99)}]";
        string D(IEnumerable<KeyValuePair<int, long>> d) => string.Join(',', d.Select(kv => $"{kv.Key}:{kv.Value}"));

        Line("chain", acc.ChainBreaks, acc.ChainBreaksInRegion, acc.SwitchEvents);
        foreach (var s in acc.Threads.Values.OrderBy(s => s.Tid))
            Line("thread", s.Tid, s.RunNs, s.ReadyNs, s.WaitNs, s.VoluntarySwitches, s.InvoluntarySwitches,
                s.Migrations,
                s.WakeupsReceived, s.WakeupsGiven, s.RepairedStarts, H(s.ReadyLatency), D(s.Wakers));
        Line("kernel", kernel.SawSyscalls, kernel.UnmatchedExits, kernel.BoundaryNs, kernel.BoundarySamples,
            kernel.BoundaryAfterOffCpuNs,
            kernel.BoundaryAfterOffCpuSamples);
        foreach (var s in kernel.Threads.Values.OrderBy(s => s.Tid))
        {
            Line("kthread", s.Tid, s.Calls, s.SyscallNs, s.KernelCpuNs, s.BlockedNs, s.ReadyNs, s.OffCpuCalls);
            foreach (var c in s.BySyscall.Values.OrderBy(c => c.Key))
                Line("  sc", c.Key, c.Calls, c.TotalNs, c.CpuNs, c.BlockedNs, c.ReadyNs, c.OffCpuCalls);
        }
        Line("convoys", convoys.SawLockSyscalls, convoys.UnconfirmedHandoffs);
        foreach (var o in convoys.Objects.OrderBy(o => o.Object.ToString(), StringComparer.Ordinal))
            Line("object", o.Object, o.Handoffs, o.HandoffsInConvoys, o.BlockingWaits, o.Acquisitions,
                o.FastAcquisitions, o.LostRaces,
                o.Episodes, o.ConvoyNs, o.LongestChain, H(o.HandoffGap), H(o.QueueWait),
                    string.Join(',', o.Participants), string.Join(',', o.Waiters));
        foreach (var s in convoys.Threads.Values.OrderBy(s => s.Tid))
            Line("cthread", s.Tid, s.HandoffsReceived, s.HandoffsGiven, s.TimeInConvoyNs, s.HandoffsReceivedInConvoys,
                s.LostRaces,
                H(s.QueueWait), H(s.ReadyLatency), D(s.ReceivedFrom), D(s.GivenTo));
        foreach (var s in wakeups.Threads.Values.OrderBy(s => s.Tid))
            Line("wthread", s.Tid, s.Wakeups, s.Futile, s.Spurious, H(s.SameCpuLatency), H(s.CrossCpuLatency));
        foreach (var s in smp.Threads.Values.OrderBy(s => s.Tid))
            Line("sthread", s.Tid, string.Join(',', s.ResidencyNs), s.Migrations, s.CpuChanges,
                s.WakeupsReceivedSameCpu,
                s.WakeupsReceivedCrossCpu, s.WakeupsGivenSameCpu, s.WakeupsGivenCrossCpu, s.RunnableWhileIdleNs);
        foreach (var c in smp.Cpus) Line("cpu", c.Cpu, c.Seen, c.BusyNs, c.IdleNs, c.Switches);
        return sb.ToString();
    }

    internal static string Dump(FindingEvidence f)
    {
        var sb = new StringBuilder();
        void Line(params object?[] values) =>
            sb.AppendLine(string.Join(' ', values.Select(v => Convert.ToString(v, CultureInfo.InvariantCulture))));
        string D<TValue>(IEnumerable<KeyValuePair<int, TValue>> d) =>
            string.Join(',', d.Select(kv => $"{kv.Key}:{kv.Value}"));
        string B(BucketSeries b) => $"[{b.WidthNs} {b.First} {string.Join(',', b.Ns)}]";

        Line("fseries", B(f.HoldingDescheduled), B(f.WakeWhileHolding), B(f.HigherPriorityReady));
        foreach (var t in f.Threads.Values.OrderBy(t => t.Tid))
            Line("fthread", t.Tid, t.Preemptions, t.PreemptedReadyNs, t.HigherPriorityPreemptions, t.WakePreemptions,
                D(t.ReadyByPreemptor), t.HigherPriorityReadyNs, t.StartReadyNs, B(t.PreemptedReady));
        foreach (var o in f.Objects.Values.OrderBy(o => o.Object.ToString(), StringComparer.Ordinal))
            Line("fobject", o.Object, D(o.BlockedNs), o.BlockingWaits, string.Join(',', o.Releasers),
                D(o.HolderDescheduledNs), o.DeschedulesWhileHolding, D(o.WaitBehindDescheduledNs),
                    D(o.WakeWhileHoldingCycles),
                D(o.WakeWhileHoldingNs), D(o.HolderWakePreemptedNs), o.WakePreemptionsWhileHolding,
                D(o.WaitBehindWakePreemptedNs), string.Join(',', o.WakeWhileHoldingWakers), B(o.Blocked));
        return sb.ToString();
    }
}
