using TraceLab.Analyzers;
using TraceLab.Core;
using TraceLab.Formats.PerfData;
using TraceLab.Formats.Registry;
using TraceLab.Formats.TraceDat;
using Xunit;

namespace TraceLab.Formats.Tests.PerfData;

/// <summary>
/// A reused tid through a real reader: a hand-built perf.data with sched tracepoints, in which tid 200 ("first")
/// runs 0 → 100 ns, exits at 90 and leaves dead at 100; init (1) forks a new 200 at 300, which runs 400 → 500 and
/// leaves as "second" (its comm after exec). The reader names threads from the comm fields as it decodes; the
/// session turns the second 200 into its own thread with its own name.
/// </summary>
public sealed class TidReuseTests : IDisposable
{
    private readonly TestTraceFile _files = new();

    public void Dispose() => _files.Dispose();

    internal static byte[] Switch(int prev, string prevComm, long prevState, int next, string nextComm) =>
        KernelEventDecoderTests.Payload(TestData.Format("sched", "sched_switch"), prev,
            w => w.Comm("prev_comm", prevComm).Int("prev_pid", prev).Int("prev_state", prevState)
                .Comm("next_comm", nextComm).Int("next_pid", next));

    internal static byte[] Exit(int pid, string comm) =>
        KernelEventDecoderTests.Payload(TestData.Format("sched", "sched_process_exit"), pid,
            w => w.Comm("comm", comm).Int("pid", pid));

    private static byte[] Fork(int parent, string parentComm, int child, string childComm) =>
        KernelEventDecoderTests.Payload(TestData.Format("sched", "sched_process_fork"), parent,
            w => w.Comm("parent_comm", parentComm).Int("parent_pid", parent).Comm("child_comm", childComm)
                .Int("child_pid", child));

    [Fact]
    public void The_second_thread_with_a_tid_is_counted_and_named_apart_from_the_first()
    {
        var path = Path.Combine(_files.Directory, "reuse.perf.data");
        File.WriteAllBytes(path, new PerfDataBuilder()
            .Sample(1, 0, Switch(0, "swapper/0", TaskState.Running, 200, "first"))
            .Sample(90, 0, Exit(200, "first"))
            .Sample(100, 0, Switch(200, "first", TaskState.ExitDead, 0, "swapper/0"))
            .Sample(250, 1, Switch(0, "swapper/1", TaskState.Running, 1, "init"))
            .Sample(300, 1, Fork(1, "init", 200, "init"))
            .Sample(400, 0, Switch(0, "swapper/0", TaskState.Running, 200, "init"))
            .Sample(500, 0, Switch(200, "second", TaskState.Interruptible, 0, "swapper/0"))
            .Sample(1000, 1, Switch(1, "init", TaskState.Interruptible, 0, "swapper/1"))
            .FinishedRound()
            .Build());
        using var reader = PerfDataReader.Open(path, new TraceReadOptions());
        using var session = new AnalysisSession(AnalysisSelection.Threads, names: reader.Threads);
        reader.Read(session);
        session.Complete();

        var second = ThreadIds.Of(200, 2);
        var a = session.Accounting;
        Assert.Equal(99, a.Stats(200).RunNs);          // 1 → 100
        Assert.Equal(0, a.Stats(200).WaitNs);
        Assert.Equal(100, a.Stats(second).RunNs);      // 400 → 500
        Assert.Equal(500, a.Stats(second).WaitNs);     // 500 → 1000
        Assert.Equal(300, a.Lineage.Born[second]);
        Assert.Equal(90, a.Lineage.Ended[200]);
        Assert.Equal(1, a.Lineage.Parents[second]);
        Assert.Equal("first", reader.Threads.NameOf(200));
        Assert.Equal("second", reader.Threads.NameOf(second));
        Assert.Equal([200], session.Instances.ReusedTids);
    }
}
