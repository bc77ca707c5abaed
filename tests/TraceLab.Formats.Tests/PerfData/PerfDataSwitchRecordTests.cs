using TraceLab.Core;
using TraceLab.Formats.PerfData;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Formats.Tests.PerfData;

/// <summary>
/// The kernel's task records as events (<see cref="TaskRecords"/>' rule), in hand-built files with known answers:
/// SWITCH_CPU_WIDE switch-outs as switches (switch-ins not counted again), per-task SWITCH records, prev_state from
/// the preempt flag and EXIT records, FORK/EXIT records as forks and exits, and nothing counted twice when the
/// sched_switch tracepoint was recorded too.
/// </summary>
public sealed class PerfDataSwitchRecordTests : IDisposable
{
    private readonly TestTraceFile _files = new();

    public void Dispose() => _files.Dispose();

    private (PerfDataReader Reader, List<KernelEvent> Events) Read(PerfDataBuilder b)
    {
        var path = Path.Combine(_files.Directory, "sw.perf.data");
        File.WriteAllBytes(path, b.Build());
        var reader = PerfDataReader.Open(path);
        var sink = new TraceDatRoundTripTests.ListSink();
        reader.Read(sink);
        return (reader, sink.Events);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Cpu_wide_switch_out_records_are_the_switches(bool compress)
    {
        var (reader, events) = Read(new PerfDataBuilder { Tracepoints = false, Compress = compress }
            .Task(PerfRecordType.Fork, 50, 1, tid: 7, parent: 5)
            .SwitchCpuWide(100, 0, thread: 5, other: 6, @out: true, preempt: true)
            .SwitchCpuWide(101, 0, thread: 6, other: 5, @out: false)
            .Task(PerfRecordType.Exit, 150, 1, tid: 7, parent: 5)
            .SwitchCpuWide(160, 1, thread: 7, other: 0, @out: true)
            .SwitchCpuWide(161, 1, thread: 0, other: 7, @out: false)
            .SwitchCpuWide(200, 0, thread: 6, other: 0, @out: true)
            .FinishedRound());
        using var _ = reader;

        Assert.True(reader.SwitchesFromRecords);
        Assert.Equal(
        [
            "50 [1] fork 5 -> 7 (Process)",
            "100 [0] switch 5 (R) -> 6",
            "150 [1] exit 7",
            "160 [1] switch 7 (X) -> 0",
            "200 [0] switch 6 (S) -> 0",
        ], events.Select(e => e.ToString()));
        Assert.Equal(5, reader.RecordCount(PerfRecordType.SwitchCpuWide));
        Assert.Equal(5, reader.Info.EventCount);
    }

    [Fact]
    public void A_dead_threads_switch_out_with_tid_minus_one_is_the_cpus_running_thread_exiting()
    {
        var (reader, events) = Read(new PerfDataBuilder { Tracepoints = false }
            .SwitchCpuWide(100, 0, thread: 5, other: 8, @out: true)
            .SwitchCpuWide(150, 0, thread: -1, other: 0, @out: true)
            .FinishedRound());
        using var _ = reader;
        Assert.Equal(["100 [0] switch 5 (S) -> 8", "150 [0] switch 8 (X) -> 0"], events.Select(e => e.ToString()));
    }

    [Fact]
    public void Per_task_switch_records_switch_the_thread_out_to_and_in_from_no_thread()
    {
        var (reader, events) = Read(new PerfDataBuilder { Tracepoints = false }
            .SwitchTask(100, 1, thread: 9, @out: false)
            .SwitchTask(180, 1, thread: 9, @out: true)
            .FinishedRound());
        using var _ = reader;
        Assert.Equal(["100 [1] switch 0 (R) -> 9", "180 [1] switch 9 (S) -> 0"], events.Select(e => e.ToString()));
    }

    [Fact]
    public void With_the_sched_switch_tracepoint_recorded_switch_records_are_not_counted_again()
    {
        var (reader, events) = Read(new PerfDataBuilder { ContextSwitch = true }
            .Sample(100, 0, TestTraceFile.Switch(5, 6))
            .SwitchCpuWide(101, 0, thread: 5, other: 6, @out: true)
            .SwitchCpuWide(102, 0, thread: 6, other: 5, @out: false)
            .FinishedRound());
        using var _ = reader;

        Assert.False(reader.SwitchesFromRecords);
        var e = Assert.Single(events);
        Assert.Equal((100L, 5, 6), (e.Timestamp, e.PrevTid, e.NextTid));
        Assert.Equal(2, reader.RecordCount(PerfRecordType.SwitchCpuWide));
    }

    [Fact]
    public void Task_records_keep_time_order_with_samples_across_rounds()
    {
        // CPU 1's buffer is written after CPU 0's within a round: the fork at 15 comes before the sample at 20.
        var (reader, events) = Read(new PerfDataBuilder()
            .Sample(10, 0, TestTraceFile.Switch(1, 2))
            .Sample(20, 0, TestTraceFile.Switch(2, 3))
            .Task(PerfRecordType.Fork, 15, 1, tid: 30, parent: 2, pid: 2)
            .Task(PerfRecordType.Exit, 25, 1, tid: 30, parent: 2, pid: 2)
            .FinishedRound()
            .FinishedRound());
        using var _ = reader;
        Assert.Equal([10L, 15, 20, 25], events.Select(x => x.Timestamp));
        Assert.Equal(
            [KernelEventKind.Switch, KernelEventKind.Fork, KernelEventKind.Switch, KernelEventKind.Exit],
            events.Select(x => x.Kind));
        // pid 2 ≠ tid 30: a thread of process 2, not a process of its own.
        Assert.Equal(ForkChild.Thread, events[1].ChildKind);
    }

    [Fact]
    public void A_file_with_neither_tracepoints_nor_switch_records_is_refused_with_what_to_record()
    {
        var bytes = new PerfDataBuilder { Tracepoints = false }.Build();
        // Clear context_switch (bit 26 of the attr flags at attr offset 40; the attr follows the 8-byte id at 112).
        bytes[112 + 40 + 3] &= unchecked((byte)~(1 << 2));
        var path = Path.Combine(_files.Directory, "none.perf.data");
        File.WriteAllBytes(path, bytes);
        var error = Assert.Throws<TraceFormatException>(() => PerfDataReader.Open(path).Dispose());
        Assert.Contains("--switch-events", error.Message, StringComparison.Ordinal);
    }
}
