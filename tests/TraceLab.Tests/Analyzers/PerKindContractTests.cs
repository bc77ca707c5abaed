using TraceLab.Analyzers;
using TraceLab.Core;

namespace TraceLab.Tests.Analyzers;

/// <summary>
/// The per-kind contract (<see cref="IPerKindAnalyzer"/>) serves any analyzer, not only the built-in ones: the pass
/// calls exactly the entry points it wants, with the slots the accounting resolved for the threads the event names.
/// </summary>
public sealed class PerKindContractTests
{
    /// <summary>Records each call as "entry:pid/prev/next/woken", the tids of the slots it was given.</summary>
    private sealed class Recorder(ThreadAccounting accounting, PerKindEvents wants) : IPerKindAnalyzer
    {
        public List<string> Calls { get; } = [];
        public PerKindEvents Wants => wants;

        private string Tids(in EventSlots s) => $"{Tid(s.Pid)}/{Tid(s.Prev)}/{Tid(s.Next)}/{Tid(s.Woken)}";
        private string Tid(int slot) => slot < 0 ? "-" : accounting.Slots.TidOf(slot).ToString();

        public void OnSyscallEnter(in KernelEvent e, in EventSlots s) => Calls.Add("enter:" + Tids(s));
        public void OnSyscallExit(in KernelEvent e, in EventSlots s) => Calls.Add("exit:" + Tids(s));
        public void OnSwitch(in KernelEvent e, in EventSlots s) => Calls.Add("switch:" + Tids(s));
        public void OnWaking(in KernelEvent e, in EventSlots s) => Calls.Add("waking:" + Tids(s));
        public void OnThreadEvidence(in KernelEvent e, in EventSlots s) => Calls.Add("evidence:" + Tids(s));
        public void OnCpuEvidence(int cpu) => Calls.Add($"cpu:{cpu}");
        public void OnEvent(in KernelEvent e) => Calls.Add($"event:{e.Kind}");
        public void OnRegionBegin() => Calls.Add("begin");
        public void Complete(long end) => Calls.Add("complete");
    }

    private static readonly KernelEvent[] Script =
    [
        KernelEvent.Switch(100, 0, 0, 120, 0, 11, 120),
        EventScript.SyscallBy(110, 0, 11),
        EventScript.SyscallBy(120, 1, 12), // first event on CPU 1: the accounting had not seen it
        KernelEvent.Waking(130, 0, 11, 13, 0),
        KernelEvent.Switch(140, 0, 11, 120, TaskState.Interruptible, 13, 120),
        KernelEvent.Migrate(150, 1, 12, 12, 1, 0),
    ];

    private static List<string> Run(PerKindEvents wants)
    {
        var accounting = new ThreadAccounting();
        var recorder = new Recorder(accounting, wants);
        var pass = new AnalysisPass(accounting, recorder);
        foreach (var e in Script) pass.OnEvent(e);
        pass.Complete();
        return recorder.Calls;
    }

    [Fact]
    public void Each_wanted_entry_point_gets_the_slots_of_the_threads_the_event_names()
    {
        Assert.Equal(
        [
            "switch:-/-/11/-", "enter:11/-/-/-", "cpu:1", "enter:12/-/-/-", "waking:11/-/-/13", "switch:-/11/13/-",
            "event:Migrate", "complete",
        ], Run(PerKindEvents.SyscallEnter | PerKindEvents.Switch | PerKindEvents.Waking | PerKindEvents.CpuEvidence));
    }

    [Fact]
    public void An_entry_point_not_wanted_is_never_called()
    {
        Assert.Equal(["switch:-/-/11/-", "switch:-/11/13/-", "event:Migrate", "complete"], Run(PerKindEvents.Switch));
    }
}
