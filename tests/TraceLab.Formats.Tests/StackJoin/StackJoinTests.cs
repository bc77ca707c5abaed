using TraceLab.Core;
using TraceLab.Formats.StackJoin;

namespace TraceLab.Formats.Tests.StackJoin;

/// <summary>
/// The join of a trace's events with a stack recording's marks, on hand-built streams whose answer is known: which
/// event takes which stack, and what is counted unmatched or after the trace.
/// </summary>
public sealed class StackJoinTests
{
    private const long Blocked = 1; // TASK_INTERRUPTIBLE
    private const long Preempted = 0x100; // "R+": TASK_REPORT_MAX set, no state bit

    private static (List<int> Stacks, Formats.StackJoin.StackJoin Join) Run(KernelEvent[] trace, KernelEvent[] marks)
    {
        var queue = new Queue<StackMark>(marks.Select(m => StackMark.Of(m)));
        var join = new Formats.StackJoin.StackJoin(() => queue.Count > 0 ? queue.Dequeue() : null);
        var stacks = trace.Select(e => join.StackOf(e)).ToList();
        join.Finish(trace.Length > 0 ? trace[^1].Timestamp : 0);
        return (stacks, join);
    }

    private static KernelEvent Futex(long ts, int cpu, int tid, long uaddr, long op) =>
        KernelEvent.SyscallEnter(ts, cpu, tid, 202, uaddr, op);

    [Fact]
    public void Each_event_takes_the_stack_of_its_own_hit_on_its_cpu_and_thread()
    {
        KernelEvent[] trace =
        [
            KernelEvent.Switch(1_000, 0, 10, 120, Blocked, 11, 120),
            KernelEvent.Waking(2_000, 1, 20, 10, 0),
            Futex(3_000, 1, 20, 0x1000, 1),
            KernelEvent.Migrate(3_500, 1, 20, 20, 1, 0),
        ];
        KernelEvent[] marks =
        [
            KernelEvent.Switch(1_400, 0, 10, 120, Blocked, 11, 120).WithStack(7),
            KernelEvent.Waking(2_450, 1, 20, 10, 0).WithStack(8),
            Futex(3_440, 1, 20, 0x1000, 1).WithStack(9),
        ];
        var (stacks, join) = Run(trace, marks);
        Assert.Equal([7, 8, 9, 0], stacks);
        Assert.Equal((3, 3, 0, 0), (join.Marks, join.Joined, join.Unmatched, join.AfterTrace));
        Assert.Equal(450, join.MaxOffset);
    }

    [Fact]
    public void A_preempted_switch_which_the_stack_recording_leaves_out_takes_no_stack_and_steals_none()
    {
        KernelEvent[] trace =
        [
            KernelEvent.Switch(1_000, 0, 10, 120, Preempted, 11, 120),
            KernelEvent.Switch(3_000, 0, 10, 120, Blocked, 12, 120),
        ];
        KernelEvent[] marks = [KernelEvent.Switch(3_400, 0, 10, 120, Blocked, 12, 120).WithStack(5)];
        var (stacks, join) = Run(trace, marks);
        Assert.Equal([0, 5], stacks);
        Assert.Equal(0, join.Unmatched);
    }

    [Fact]
    public void A_lost_hit_does_not_shift_the_stacks_of_the_next_calls()
    {
        // The trace lost the first futex wait; the thread's next calls differ in their futex word or operation.
        KernelEvent[] trace =
        [
            Futex(2_000, 0, 10, 0x2000, 0),
            Futex(3_000, 0, 10, 0x1000, 1),
        ];
        KernelEvent[] marks =
        [
            Futex(1_400, 0, 10, 0x1000, 0).WithStack(1),
            Futex(2_400, 0, 10, 0x2000, 0).WithStack(2),
            Futex(3_400, 0, 10, 0x1000, 1).WithStack(3),
        ];
        var (stacks, join) = Run(trace, marks);
        Assert.Equal([2, 3], stacks);
        Assert.Equal((3, 2, 1), (join.Marks, join.Joined, join.Unmatched));
    }

    [Fact]
    public void Marks_of_other_cpus_threads_or_beyond_the_window_are_not_taken()
    {
        var far = Formats.StackJoin.StackJoin.Window + 1;
        KernelEvent[] trace = [KernelEvent.Waking(1_000_000, 0, 10, 11, 0)];
        KernelEvent[] marks =
        [
            KernelEvent.Waking(1_000_000 - far, 0, 10, 11, 0).WithStack(1),
            KernelEvent.Waking(1_000_100, 1, 10, 11, 0).WithStack(2),
            KernelEvent.Waking(1_000_100, 0, 12, 11, 0).WithStack(3),
            KernelEvent.Waking(1_000_100, 0, 10, 13, 0).WithStack(4),
            KernelEvent.Waking(1_000_000 + far, 0, 10, 11, 0).WithStack(5),
        ];
        var (stacks, join) = Run(trace, marks);
        Assert.Equal([0], stacks);
        // Within the trace's time all four but the last are unmatched; the last lies after the trace's end + window.
        Assert.Equal((5, 0, 4, 1), (join.Marks, join.Joined, join.Unmatched, join.AfterTrace));
    }

    [Fact]
    public void Marks_held_stay_bounded_by_the_window_on_a_cpu_the_trace_never_asks_about()
    {
        // A million marks on CPU 3, none of which the trace's events (all on CPU 0) can take: all are counted, and
        // the join keeps only those within two windows of the newest.
        var count = 0;
        var join = new Formats.StackJoin.StackJoin(() => count < 1_000_000
            ? new StackMark(count++ * 1_000L, 3, 10, KernelEventKind.Waking, 11, 1)
            : null);
        for (var t = 0L; t < 1_000_000_000; t += 10_000_000)
            Assert.Equal(0, join.StackOf(KernelEvent.Waking(t, 0, 10, 11, 0)));
        join.Finish(1_000_000_000);
        Assert.Equal(1_000_000, join.Marks);
        Assert.Equal(1_000_000, join.Unmatched + join.AfterTrace);
        Assert.True(join.HeldMarks <= 2 * Formats.StackJoin.StackJoin.Window / 1_000 + 2, $"{join.HeldMarks} held");
    }
}
