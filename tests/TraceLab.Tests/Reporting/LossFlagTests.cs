using TraceLab.Analyzers;
using TraceLab.Core;
using TraceLab.Reporting;

namespace TraceLab.Tests.Reporting;

/// <summary>
/// Lost-event flags on a hand-built two-CPU trace: process 100's thread 101 runs only on CPU 0, thread 102 only on
/// CPU 1. Which rows are flagged follows from the definition (docs/metrics.md#loss-flags) by inspection.
/// </summary>
public sealed class LossFlagTests
{
    private const long Ms = 1_000_000;

    private static RunReport Report(long[]? lostPerCpu, AnalysisSelection? kinds = null, long[]? missedPages = null)
    {
        var session = new AnalysisSession(kinds ?? AnalysisSelection.Threads | AnalysisSelection.Smp);
        KernelEvent[] events =
        [
            KernelEvent.Fork(0, 0, 100, 101),
            KernelEvent.Fork(0, 0, 100, 102),
            KernelEvent.Switch(1 * Ms, 0, 0, 120, TaskState.Running, 101, 120),
            KernelEvent.Switch(1 * Ms, 1, 0, 120, TaskState.Running, 102, 120),
            KernelEvent.Switch(5 * Ms, 0, 101, 120, TaskState.Interruptible, 0, 120),
            KernelEvent.Switch(6 * Ms, 1, 102, 120, TaskState.Interruptible, 0, 120),
        ];
        foreach (var e in events) session.OnEvent(e);
        session.Complete();
        var info = new TraceInfo
        {
            Backend = "test",
            TraceFile = "hand-built",
            CpuCount = 2,
            LostEventsPerCpu =
                lostPerCpu,
            PagesWithMissedEvents = missedPages,
        };
        return ReportBuilder.Build(info, new ThreadTable(), session, workload: null, pidOverride: 100);
    }

    private static ThreadSectionView Row(RunReport r, int tid) => new(r.Threads.Single(t => t.Tid == tid));

    private readonly record struct ThreadSectionView(ThreadSection T)
    {
        public bool Flagged => T.MayBeAffectedByLoss == true;
    }

    [Fact]
    public void Loss_on_one_CPU_flags_only_the_threads_that_ran_there()
    {
        var r = Report([0, 7]);

        Assert.Equal("per-cpu", r.Capture.LossScope);
        Assert.Equal([1], r.Capture.LossCpus!);
        Assert.Contains("threads[].runNs", r.Capture.LossAffectedMetrics!);
        Assert.False(Row(r, 101).Flagged);
        Assert.True(Row(r, 102).Flagged);
        Assert.Equal([1], Row(r, 102).T.LossCpus!);
        Assert.False(Row(r, 100).Flagged);   // the process's own tid never ran
        Assert.Contains("events were lost on CPU 1: the figures of threads 102, which ran there, may be affected "
            + "(marked ⚠ in report.md)", r.Warnings);
        Assert.Contains("| 102 ⚠ |", ReportMarkdown.Render(r));
        Assert.DoesNotContain("| 101 ⚠ |", ReportMarkdown.Render(r));
    }

    [Fact]
    public void A_page_that_missed_events_counts_as_loss_on_its_CPU()
    {
        var r = Report([0, 0], missedPages: [3, 0]);
        Assert.Equal([0], r.Capture.LossCpus!);
        Assert.True(Row(r, 101).Flagged);
        Assert.False(Row(r, 102).Flagged);
    }

    [Fact]
    public void A_total_that_cannot_be_placed_on_CPUs_flags_every_thread()
    {
        // ETW reports one EventsLost for the session: one element for a two-CPU trace.
        var r = Report([7]);
        Assert.Equal("trace", r.Capture.LossScope);
        Assert.Null(r.Capture.LossCpus);
        Assert.All(r.Threads, t => Assert.True(t.MayBeAffectedByLoss));
        Assert.All(r.Threads, t => Assert.Null(t.LossCpus));
    }

    [Fact]
    public void Without_run_time_per_CPU_every_thread_is_flagged()
    {
        var r = Report([0, 7], AnalysisSelection.Threads);
        Assert.Equal("trace", r.Capture.LossScope);
        Assert.All(r.Threads, t => Assert.True(t.MayBeAffectedByLoss));
    }

    [Fact]
    public void No_loss_no_flags_and_the_json_is_unchanged()
    {
        var r = Report([0, 0]);
        Assert.Null(r.Capture.LossScope);
        Assert.Null(r.Capture.LossAffectedMetrics);
        Assert.All(r.Threads, t => Assert.Null(t.MayBeAffectedByLoss));
        var json = ReportJson.Serialize(r);
        Assert.DoesNotContain("loss", json, StringComparison.OrdinalIgnoreCase);
    }

    [Fact]
    public void Flags_are_in_report_json_only_where_set()
    {
        var json = ReportJson.Serialize(Report([0, 7]));
        Assert.Equal(1, Count(json, "\"mayBeAffectedByLoss\": true"));
        Assert.Contains("\"lossScope\": \"per-cpu\"", json);
        var back = ReportJson.Deserialize(json);
        Assert.True(back.Threads.Single(t => t.Tid == 102).MayBeAffectedByLoss);
    }

    private static int Count(string s, string what)
    {
        var n = 0;
        for (var i = s.IndexOf(what, StringComparison.Ordinal); i >= 0; i = s.IndexOf(
            what, i + 1, StringComparison.Ordinal)) n++;
        return n;
    }
}
