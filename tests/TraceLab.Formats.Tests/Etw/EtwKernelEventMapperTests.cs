using TraceLab.Core;
using TraceLab.Formats.Etw;
using static TraceLab.Formats.Tests.Etw.EtwPayloads;

namespace TraceLab.Formats.Tests.Etw;

public class EtwKernelEventMapperTests
{
    private const int Cpu = 3;
    private const long Ts = 1_000_000_123;

    private readonly ThreadTable _threads = new();
    private readonly ThreadProcessMap _processes = new();
    private readonly EtwKernelEventMapper _mapper;

    public EtwKernelEventMapperTests() => _mapper = new EtwKernelEventMapper(_threads, _processes);

    private KernelEvent Map(EtwEventHeader header, byte[] payload, bool expectOk = true)
    {
        var e = new KernelEvent { Kind = KernelEventKind.Marker, Text = "stale" };
        Assert.Equal(expectOk, _mapper.Map(header, payload, ref e));
        return e;
    }

    private static EtwEventHeader CSwitchHeader(int headerTid = -1) =>
        ThreadHeader(EtwKernelEvents.CSwitch, Ts, Cpu, headerTid);

    [Theory]
    [InlineData(KThreadState.Ready, (byte)KWaitReason.WrPreempted)]
    [InlineData(KThreadState.DeferredReady, (byte)KWaitReason.WrDeferredPreempt)]
    [InlineData(KThreadState.Standby, (byte)KWaitReason.WrQuantumEnd)]
    public void CSwitch_runnable_old_thread_is_a_preemption(KThreadState state, byte reason)
    {
        var e = Map(
            CSwitchHeader(), CSwitch(newTid: 4242, oldTid: 1717, newPrio: 9, oldPrio: 8, reason, waitMode: 0, state));

        Assert.Equal(KernelEvent.Switch(Ts, Cpu, 1717, 8, TaskState.Running, 4242, 9, reason), e);
        Assert.Equal(1717, e.CurrentTid);
        Assert.True(TaskState.IsPreempted(e.PrevState));
    }

    [Fact]
    public void CSwitch_user_mode_wait_is_an_interruptible_sleep()
    {
        var e = Map(CSwitchHeader(),
            CSwitch(200, 100, 10, 11, (byte)KWaitReason.UserRequest, waitMode: 1, KThreadState.Waiting));

        Assert.Equal(KernelEvent.Switch(Ts, Cpu, 100, 11, TaskState.Interruptible, 200, 10, 6), e);
        Assert.False(TaskState.IsPreempted(e.PrevState));
    }

    [Fact]
    public void CSwitch_kernel_mode_wait_is_an_uninterruptible_sleep()
    {
        var e = Map(CSwitchHeader(),
            CSwitch(200, 100, 10, 11, (byte)KWaitReason.WrAlertByThreadId, waitMode: 0, KThreadState.Waiting));

        Assert.Equal(KernelEvent.Switch(Ts, Cpu, 100, 11, TaskState.Uninterruptible, 200, 10, 37), e);
        Assert.Equal(37, e.PrevWaitReason);
    }

    [Fact]
    public void CSwitch_terminated_old_thread_is_dead()
    {
        var e = Map(
            CSwitchHeader(), CSwitch(0, 100, 0, 11, (byte)KWaitReason.WrTerminated, 0, KThreadState.Terminated));

        Assert.Equal(KernelEvent.Switch(Ts, Cpu, 100, 11, TaskState.ExitDead, 0, 0, 22), e);
    }

    [Theory]
    [InlineData(KThreadState.Initialized)]
    [InlineData(KThreadState.Running)]
    [InlineData(KThreadState.Transition)]
    [InlineData(KThreadState.GateWaitObsolete)]
    [InlineData(KThreadState.WaitingForProcessOutSwap)]
    [InlineData((KThreadState)200)]
    public void CSwitch_other_states_count_as_blocked_in_the_kernel(KThreadState state)
    {
        var e = Map(CSwitchHeader(), CSwitch(200, 100, 10, 11, 0, 1, state));

        Assert.Equal(TaskState.Uninterruptible, e.PrevState);
    }

    [Theory]
    [InlineData(7, KWaitReason.WrExecutive)]
    [InlineData(13, KWaitReason.WrUserRequest)]
    [InlineData(21, KWaitReason.WrKeyedEvent)]
    [InlineData(29, KWaitReason.WrMutex)]
    [InlineData(37, KWaitReason.WrAlertByThreadId)]
    [InlineData(42, KWaitReason.WrRcu)]
    [InlineData(255, (KWaitReason)255)]
    public void CSwitch_keeps_the_raw_wait_reason_number(byte raw, KWaitReason name)
    {
        var e = Map(CSwitchHeader(), CSwitch(200, 100, 10, 11, raw, 1, KThreadState.Waiting));

        Assert.Equal(raw, e.PrevWaitReason);
        Assert.Equal(name, (KWaitReason)e.PrevWaitReason);
    }

    [Fact]
    public void System_ThreadWaitReason_names_are_wrong_from_7_on()
    {
        // What TraceEvent's CSwitchTraceData.OldThreadWaitReason would print for KWAIT_REASON 9 (WrPageIn) and 29.
        Assert.Equal("LpcReceive", ((System.Diagnostics.ThreadWaitReason)9).ToString());
        Assert.Equal(KWaitReason.WrPageIn, (KWaitReason)9);
        Assert.False(Enum.IsDefined((System.Diagnostics.ThreadWaitReason)29));
    }

    [Fact]
    public void CSwitch_idle_is_thread_zero_on_both_sides()
    {
        var toIdle = Map(CSwitchHeader(), CSwitch(0, 100, 0, 11, 6, 1, KThreadState.Waiting));
        var fromIdle = Map(CSwitchHeader(), CSwitch(100, 0, 11, 0, 0, 0, KThreadState.Ready));

        Assert.Equal(0, toIdle.NextTid);
        Assert.Equal(0, fromIdle.PrevTid);
        Assert.Equal(0, fromIdle.CurrentTid);
    }

    [Fact]
    public void ReadyThread_is_a_wakeup_by_the_header_thread_on_the_logging_cpu()
    {
        var e = Map(ThreadHeader(EtwKernelEvents.ReadyThread, Ts, Cpu, 555), ReadyThread(readiedTid: 777));

        Assert.Equal(KernelEvent.Waking(Ts, Cpu, waker: 555, woken: 777, targetCpu: Cpu), e);
        Assert.Equal(0, e.Flags);
    }

    [Theory]
    [InlineData((byte)1)]
    [InlineData((byte)(1 | 2 | 4))]
    public void ReadyThread_from_a_DPC_is_flagged_as_interrupt_context(byte flag)
    {
        var e = Map(
            ThreadHeader(EtwKernelEvents.ReadyThread, Ts, Cpu, 555), ReadyThread(777, adjustReason: 2, flag: flag));

        Assert.Equal(KernelEventKind.Waking, e.Kind);
        Assert.Equal(555, e.CurrentTid);
        Assert.Equal(777, e.WokenTid);
        Assert.Equal(EventFlags.SoftIrq, e.Flags);
        Assert.True(EventFlags.InInterrupt(e.Flags));
    }

    [Fact]
    public void ReadyThread_swap_flags_alone_are_thread_context()
    {
        var e = Map(ThreadHeader(EtwKernelEvents.ReadyThread, Ts, Cpu, 555), ReadyThread(777, flag: 2 | 4));

        Assert.Equal(0, e.Flags);
    }

    [Theory]
    [InlineData(8)]
    [InlineData(4)]
    public void Thread_start_is_a_fork_from_the_process_and_records_membership_and_name(int pointerSize)
    {
        var e = Map(ThreadHeader(EtwKernelEvents.ThreadStart, Ts, Cpu, 900, pointerSize),
            Thread(pointerSize, pid: 4000, tid: 4004, "worker-1"));

        Assert.Equal(KernelEvent.Fork(Ts, Cpu, 4000, 4004) with { CurrentTid = 900 }, e);
        Assert.Equal(4000, _processes.Processes[4004]);
        Assert.Equal("worker-1", _threads.Names[4004]);
    }

    [Theory]
    [InlineData(8)]
    [InlineData(4)]
    public void Thread_rundown_start_is_a_fork_too(int pointerSize)
    {
        var e = Map(ThreadHeader(EtwKernelEvents.ThreadDCStart, Ts, Cpu, 4, pointerSize),
            Thread(pointerSize, 4000, 4008, "pool"));

        Assert.Equal(KernelEvent.Fork(Ts, Cpu, 4000, 4008) with { CurrentTid = 4 }, e);
        Assert.Equal("pool", _threads.Names[4008]);
    }

    [Theory]
    [InlineData(8)]
    [InlineData(4)]
    public void Thread_end_is_an_exit(int pointerSize)
    {
        var e = Map(
            ThreadHeader(EtwKernelEvents.ThreadEnd, Ts, Cpu, 4004, pointerSize), Thread(pointerSize, 4000, 4004, ""));

        Assert.Equal(KernelEvent.Exit(Ts, Cpu, 4004), e);
        Assert.Equal(4000, _processes.Processes[4004]);
        Assert.False(_threads.TryGetName(4004, out _));
    }

    [Fact]
    public void Thread_rundown_end_only_records_membership_and_name()
    {
        var e = Map(ThreadHeader(EtwKernelEvents.ThreadDCEnd, Ts, Cpu, 4), Thread(8, 4000, 4004, "still-alive"));

        Assert.Equal(new KernelEvent { Timestamp = Ts, Cpu = Cpu, CurrentTid = 4 }, e);
        Assert.Equal(4000, _processes.Processes[4004]);
        Assert.Equal("still-alive", _threads.Names[4004]);
    }

    [Theory]
    [InlineData(8)]
    [InlineData(4)]
    public void Thread_version_2_has_no_name(int pointerSize)
    {
        var e = Map(ThreadHeader(EtwKernelEvents.ThreadStart, Ts, Cpu, 900, pointerSize, version: 2),
            Thread(pointerSize, 4000, 4004, null, version: 2));

        Assert.Equal(KernelEvent.Fork(Ts, Cpu, 4000, 4004) with { CurrentTid = 900 }, e);
        Assert.False(_threads.TryGetName(4004, out _));
    }

    [Fact]
    public void Thread_version_0_has_the_ids_swapped()
    {
        var payload = new byte[8];
        System.Buffers.Binary.BinaryPrimitives.WriteInt32LittleEndian(payload, 4004);
        System.Buffers.Binary.BinaryPrimitives.WriteInt32LittleEndian(payload.AsSpan(4), 4000);

        var e = Map(ThreadHeader(EtwKernelEvents.ThreadStart, Ts, Cpu, 900, version: 0), payload);

        Assert.Equal(4000, e.ParentTid);
        Assert.Equal(4004, e.ChildTid);
    }

    [Fact]
    public void A_repeated_thread_name_is_not_allocated_again()
    {
        Map(ThreadHeader(EtwKernelEvents.ThreadDCStart, Ts, Cpu, 4), Thread(8, 4000, 4004, "worker"));
        var first = _threads.Names[4004];
        Map(ThreadHeader(EtwKernelEvents.ThreadDCEnd, Ts, Cpu, 4), Thread(8, 4000, 4004, "worker"));

        Assert.Same(first, _threads.Names[4004]);
    }

    [Fact]
    public void SetName_renames_the_thread()
    {
        Map(ThreadHeader(EtwKernelEvents.ThreadStart, Ts, Cpu, 900), Thread(8, 4000, 4004, "old"));
        var e = Map(ThreadHeader(EtwKernelEvents.ThreadSetName, Ts, Cpu, 4004), SetName(4000, 4004, "renamed"));

        Assert.Equal(KernelEventKind.Other, e.Kind);
        Assert.Equal("renamed", _threads.Names[4004]);
    }

    [Fact]
    public void SysClEnter_64_bit_keeps_the_service_address()
    {
        var e = Map(PerfInfoHeader(EtwKernelEvents.SysClEnter, Ts, Cpu, 321), SysClEnter(8, 0xFFFFF80012345678));

        Assert.Equal(new KernelEvent
        {
            Timestamp = Ts,
            Cpu = Cpu,
            CurrentTid = 321,
            Kind = KernelEventKind.SyscallEnter,
            SyscallNr = -1,
            Arg0 = unchecked((long)0xFFFFF80012345678),
        }, e);
    }

    [Fact]
    public void SysClEnter_32_bit_reads_four_bytes()
    {
        var e = Map(
            PerfInfoHeader(EtwKernelEvents.SysClEnter, Ts, Cpu, 321, pointerSize: 4), SysClEnter(4, 0x81234567));

        Assert.Equal(KernelEventKind.SyscallEnter, e.Kind);
        Assert.Equal(0x81234567L, e.Arg0);
    }

    [Theory]
    [InlineData(0u, 0L)]
    [InlineData(0x103u, 0x103L)] // STATUS_PENDING
    [InlineData(0xC0000005u, -1073741819L)] // STATUS_ACCESS_VIOLATION
    public void SysClExit_status_is_a_signed_NTSTATUS(uint status, long expected)
    {
        var e = Map(PerfInfoHeader(EtwKernelEvents.SysClExit, Ts, Cpu, 321), SysClExit(status));

        Assert.Equal(new KernelEvent
        {
            Timestamp = Ts,
            Cpu = Cpu,
            CurrentTid = 321,
            Kind = KernelEventKind.SyscallExit,
            SyscallNr = -1,
            Ret = expected,
        }, e);
    }

    public static TheoryData<string, byte, int, int> Truncated => new()
    {
        { "thread", EtwKernelEvents.CSwitch, 8, 0 },
        { "thread", EtwKernelEvents.CSwitch, 8, 14 },
        { "thread", EtwKernelEvents.ReadyThread, 8, 0 },
        { "thread", EtwKernelEvents.ReadyThread, 8, 6 },
        { "thread", EtwKernelEvents.ThreadStart, 8, 7 },
        { "thread", EtwKernelEvents.ThreadEnd, 4, 0 },
        { "thread", EtwKernelEvents.ThreadDCStart, 8, 3 },
        { "thread", EtwKernelEvents.ThreadDCEnd, 8, 5 },
        { "thread", EtwKernelEvents.ThreadSetName, 8, 7 },
        { "perfinfo", EtwKernelEvents.SysClEnter, 8, 7 },
        { "perfinfo", EtwKernelEvents.SysClEnter, 4, 3 },
        { "perfinfo", EtwKernelEvents.SysClExit, 8, 3 },
    };

    [Theory]
    [MemberData(nameof(Truncated))]
    public void Truncated_payloads_are_rejected_without_throwing(string task, byte opcode, int pointerSize, int length)
    {
        var guid = task == "thread" ? EtwKernelEvents.ThreadGuid : EtwKernelEvents.PerfInfoGuid;
        var header = new EtwEventHeader(guid, opcode, 3, Ts, Cpu, 66, pointerSize);

        var e = Map(header, new byte[length], expectOk: false);

        Assert.Equal(new KernelEvent { Timestamp = Ts, Cpu = Cpu, CurrentTid = 66 }, e);
        Assert.Empty(_processes.Processes);
    }

    [Fact]
    public void Thread_name_cut_off_mid_character_or_unterminated_is_still_read()
    {
        var full = Thread(8, 4000, 4004, "abc");
        var cut = full.AsSpan(0, full.Length - 3).ToArray(); // "ab" plus half of 'c', no terminator

        Map(ThreadHeader(EtwKernelEvents.ThreadStart, Ts, Cpu, 900), cut);

        Assert.Equal("ab", _threads.Names[4004]);
    }

    [Theory]
    [InlineData("thread", (byte)37)] // CompCS
    [InlineData("thread", (byte)62)] // Enqueue
    [InlineData("perfinfo", (byte)46)] // SampledProfile
    [InlineData("other", (byte)36)] // a CSwitch opcode under a GUID that is not the Thread task
    public void Unmodelled_events_are_Other(string task, byte opcode)
    {
        var guid = task switch
        {
            "thread" => EtwKernelEvents.ThreadGuid,
            "perfinfo" => EtwKernelEvents.PerfInfoGuid,
            _ => new Guid("9e814aad-3204-11d2-9a82-006008a86939"), // Process task
        };

        var e = Map(
            new EtwEventHeader(guid, opcode, 2, Ts, Cpu, 66, 8), CSwitch(1, 2, 3, 4, 5, 0, KThreadState.Waiting));

        Assert.Equal(new KernelEvent { Timestamp = Ts, Cpu = Cpu, CurrentTid = 66 }, e);
    }

    [Fact]
    public void Unknown_header_thread_is_the_thread_the_cpu_last_switched_to()
    {
        var before = Map(PerfInfoHeader(46, Ts, Cpu, tid: -1), []);
        Map(CSwitchHeader(), CSwitch(newTid: 4242, oldTid: 0, 9, 0, 0, 0, KThreadState.Ready));
        var after = Map(PerfInfoHeader(46, Ts + 1, Cpu, tid: -1), []);
        var otherCpu = Map(PerfInfoHeader(46, Ts + 2, Cpu + 1, tid: -1), []);
        var known = Map(PerfInfoHeader(46, Ts + 3, Cpu, tid: 17), []);

        Assert.Equal(-1, before.CurrentTid);
        Assert.Equal(4242, after.CurrentTid);
        Assert.Equal(-1, otherCpu.CurrentTid);
        Assert.Equal(17, known.CurrentTid);
    }
}
