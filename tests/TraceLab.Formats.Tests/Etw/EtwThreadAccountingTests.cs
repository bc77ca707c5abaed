using TraceLab.Analyzers;
using TraceLab.Core;
using TraceLab.Formats.Etw;
using static TraceLab.Formats.Tests.Etw.EtwPayloads;

namespace TraceLab.Formats.Tests.Etw;

/// <summary>ETW-mapped events drive the same accounting as ftrace ones: hand-computed ping-pong on one CPU.</summary>
public class EtwThreadAccountingTests
{
    private const int Pid = 10;
    private const int A = 100;
    private const int B = 200;
    private const int Cpu = 0;

    /// <summary>
    /// t=500   rundown: A and B exist in process 10 (header thread unknown, before any CSwitch)
    /// t=1000  idle → A
    /// t=1500  A readies B                       B: runnable (woken by A)
    /// t=2000  A waits (user mode) → B           A run 1000, voluntary; B ready 500
    /// t=2600  B readies A                       A wait 600
    /// t=3000  B waits (kernel mode) → A         B run 1000, voluntary; A ready 400
    /// t=3500  DPC (interrupting A) readies B    B wait 500, woken from interrupt context
    /// t=4000  A preempted (Ready) → B           A run 1000, involuntary; B ready 500
    /// t=4200  B syscall enter, t=4300 exit, t=4800 B's Thread End
    /// t=5000  B terminated → A                  B run 1000, no switch counted; A ready 1000
    /// t=6000  A waits (user mode) → idle        A run 1000, voluntary
    /// </summary>
    private static IEnumerable<(EtwEventHeader Header, byte[] Payload)> PingPong()
    {
        const byte user = 1, kernel = 0;
        yield return (ThreadHeader(EtwKernelEvents.ThreadDCStart, 500, Cpu, -1), Thread(8, Pid, A, "ping"));
        yield return (ThreadHeader(EtwKernelEvents.ThreadDCStart, 500, Cpu, -1), Thread(8, Pid, B, "pong"));
        yield return (Switch(1000), CSwitch(A, 0, 9, 0, 0, kernel, KThreadState.Ready));
        yield return (ThreadHeader(EtwKernelEvents.ReadyThread, 1500, Cpu, A), ReadyThread(B));
        yield return (Switch(2000), CSwitch(B, A, 9, 9, (byte)KWaitReason.UserRequest, user, KThreadState.Waiting));
        yield return (ThreadHeader(EtwKernelEvents.ReadyThread, 2600, Cpu, B), ReadyThread(A));
        yield return (Switch(3000),
            CSwitch(A, B, 9, 9, (byte)KWaitReason.WrAlertByThreadId, kernel, KThreadState.Waiting));
        yield return (ThreadHeader(EtwKernelEvents.ReadyThread, 3500, Cpu, A), ReadyThread(B, flag: 1));
        yield return (Switch(4000), CSwitch(B, A, 9, 9, (byte)KWaitReason.WrPreempted, kernel, KThreadState.Ready));
        yield return (PerfInfoHeader(EtwKernelEvents.SysClEnter, 4200, Cpu, B), SysClEnter(8, 0xFFFFF80000001000));
        yield return (PerfInfoHeader(EtwKernelEvents.SysClExit, 4300, Cpu, B), SysClExit(0));
        yield return (ThreadHeader(EtwKernelEvents.ThreadEnd, 4800, Cpu, B), Thread(8, Pid, B, "pong"));
        yield return (Switch(5000),
            CSwitch(A, B, 9, 9, (byte)KWaitReason.WrTerminated, kernel, KThreadState.Terminated));
        yield return (Switch(6000), CSwitch(0, A, 0, 9, (byte)KWaitReason.UserRequest, user, KThreadState.Waiting));
    }

    private static EtwEventHeader Switch(long ts) => ThreadHeader(EtwKernelEvents.CSwitch, ts, Cpu, -1);

    private static (ThreadAccounting Accounting, ThreadTable Threads) Run()
    {
        var threads = new ThreadTable();
        var mapper = new EtwKernelEventMapper(threads, new ThreadProcessMap());
        var accounting = new ThreadAccounting();
        var e = new KernelEvent();
        foreach (var (header, payload) in PingPong())
        {
            Assert.True(mapper.Map(header, payload, ref e));
            accounting.OnEvent(e);
        }

        accounting.Complete();
        return (accounting, threads);
    }

    [Fact]
    public void Run_ready_and_wait_times_match_the_hand_computed_values()
    {
        var (acc, _) = Run();
        var a = acc.Threads[A];
        var b = acc.Threads[B];

        Assert.Equal((3000L, 1400L, 600L), (a.RunNs, a.ReadyNs, a.WaitNs));
        Assert.Equal((2000L, 1000L, 500L), (b.RunNs, b.ReadyNs, b.WaitNs));
        Assert.Equal(0, acc.ChainBreaks);
    }

    [Fact]
    public void Voluntary_and_involuntary_switches_follow_the_thread_state()
    {
        var (acc, _) = Run();

        Assert.Equal((2L, 1L), (acc.Threads[A].VoluntarySwitches, acc.Threads[A].InvoluntarySwitches));
        // The terminated switch-out counts as neither.
        Assert.Equal((1L, 0L), (acc.Threads[B].VoluntarySwitches, acc.Threads[B].InvoluntarySwitches));
    }

    [Fact]
    public void Wakers_are_the_readying_threads_and_DPC_wakeups_count_as_interrupts()
    {
        var (acc, _) = Run();
        var a = acc.Threads[A];
        var b = acc.Threads[B];

        Assert.Equal(new Dictionary<int, long> { [B] = 1 }, a.Wakers);
        Assert.Equal(new Dictionary<int, long> { [A] = 1, [-1] = 1 }, b.Wakers);
        Assert.Equal((1L, 1L), (a.WakeupsReceived, a.WakeupsGiven));
        Assert.Equal((2L, 1L), (b.WakeupsReceived, b.WakeupsGiven));
        Assert.Equal((2L, 500L, 500L), (b.ReadyLatency.Count, b.ReadyLatency.Min, b.ReadyLatency.Max));
    }

    [Fact]
    public void Thread_events_give_process_membership_and_names()
    {
        var (acc, threads) = Run();

        Assert.Equal(new[] { A, B }, acc.Lineage.Descendants(Pid, acc.Threads.Keys));
        Assert.Equal("ping", threads.NameOf(A));
        Assert.Equal("pong", threads.NameOf(B));
    }
}
