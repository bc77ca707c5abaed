using TraceLab.Analyzers;
using TraceLab.Analyzers.Timeline;
using TraceLab.Core;
using TraceLab.Formats.Registry;
using TraceLab.Pipeline;
using TraceLab.Reporting;
using Xunit.Abstractions;

namespace TraceLab.Tests.Analyzers;

/// <summary>
/// <see cref="RedundantEvidenceFilter"/>: which unmodelled events it leaves out (hand-built sequences), and that every
/// result of the built-in analyses is the same with and without it on real traces
/// (docs/architecture.md#unmodelled-events).
/// </summary>
public sealed class RedundantEvidenceFilterTests(ITestOutputHelper output)
{
    private const int A = 100, B = 200, C = 300;

    private sealed class Recorder : IKernelEventSink
    {
        public List<KernelEvent> Events { get; } = [];

        public void OnEvent(in KernelEvent e) => Events.Add(e);
    }

    private static KernelEvent Other(long ts, int cpu, int tid) =>
        new() { Timestamp = ts, Cpu = cpu, CurrentTid = tid, Kind = KernelEventKind.Other };

    private static KernelEvent Switch(long ts, int cpu, int prev, int next) =>
        KernelEvent.Switch(ts, cpu, prev, 120, TaskState.Interruptible, next, 120);

    private static (List<KernelEvent> Delivered, long LeftOut) Filter(params KernelEvent[] events)
    {
        var recorder = new Recorder();
        var filter = new RedundantEvidenceFilter(recorder);
        foreach (var e in events) filter.OnEvent(e);
        filter.Finish();
        return (recorder.Events, filter.LeftOut);
    }

    [Fact]
    public void Unmodelled_events_between_a_threads_waking_and_its_switch_on_one_cpu_are_left_out()
    {
        // sched_waking, sched_stat_runtime, sched_wakeup, sched_stat_runtime, sched_switch: the busy system's pattern.
        var waking = KernelEvent.Waking(10, 0, A, B, 1);
        var sw = Switch(50, 0, A, C);
        var (delivered, leftOut) = Filter(waking, Other(20, 0, A), Other(30, 0, A), Other(40, 0, A), sw);

        Assert.Equal([waking, sw], delivered);
        Assert.Equal(3, leftOut);
    }

    [Fact]
    public void Unmodelled_events_between_a_threads_switch_in_and_its_next_event_on_one_cpu_are_left_out()
    {
        // sched_switch to B, sched_stat_runtime of B, B's futex: the switch already put B on the CPU.
        var sw = Switch(10, 0, A, B);
        var enter = KernelEvent.SyscallEnter(40, 0, B, 202);
        var (delivered, leftOut) = Filter(sw, Other(20, 0, B), Other(30, 0, B), enter);

        Assert.Equal([sw, enter], delivered);
        Assert.Equal(2, leftOut);
    }

    [Fact]
    public void The_last_of_a_run_is_kept_when_the_next_event_is_another_cpus()
    {
        // The held event is delivered before the next one, in order: it carries the thread's latest evidence.
        var (delivered, leftOut) = Filter(
            KernelEvent.Waking(10, 0, A, B, 1), Other(20, 0, A), Other(30, 0, A), Switch(40, 1, B, C));

        Assert.Equal([10L, 30, 40], delivered.Select(e => e.Timestamp));
        Assert.Equal(1, leftOut);
    }

    [Fact]
    public void The_held_event_is_delivered_by_Finish()
    {
        var (delivered, leftOut) = Filter(Other(10, 0, A), Other(20, 0, A));

        Assert.Equal([10L, 20], delivered.Select(e => e.Timestamp));
        Assert.Equal(0, leftOut);
    }

    public static TheoryData<string, KernelEvent, KernelEvent> KeptAfter => new()
    {
        // The previous event does not leave the thread known to run there.
        { "after a switch (its logger leaves the cpu)", Switch(10, 0, A, B), Other(20, 0, A) },
        { "after a switch to another thread", Switch(10, 0, A, C), Other(20, 0, B) },
        { "after a switch on another cpu", Switch(10, 1, A, B), Other(20, 0, B) },
        { "after a switch to idle", Switch(10, 0, A, 0), Other(20, 0, 0) },
        { "in interrupt context after a switch to its thread", Switch(10, 0, A, B),
            Other(20, 0, B).WithFlags(EventFlags.HardIrq) },
        { "earlier than the switch to its thread", Switch(20, 0, A, B), Other(10, 0, B) },
        { "after another thread's event", Other(10, 0, B), Other(20, 0, A) },
        { "after the same thread's event on another cpu", Other(10, 1, A), Other(20, 0, A) },
        { "after a self-waking", KernelEvent.Waking(10, 0, A, A, 0), Other(20, 0, A) },
        { "after a marker", KernelEvent.Marker(10, 0, A, "x"), Other(20, 0, A) },
        { "of the idle task", Other(10, 0, 0), Other(20, 0, 0) },
        // The event itself may tell something the previous one did not.
        { "in interrupt context after thread context", Other(10, 0, A), Other(20, 0, A).WithFlags(EventFlags.HardIrq) },
        { "in thread context after interrupt context", Other(10, 0, A).WithFlags(EventFlags.SoftIrq), Other(20, 0, A) },
        { "with a stack", Other(10, 0, A), Other(20, 0, A).WithStack(7) },
        { "earlier than the previous event", Other(20, 0, A), Other(10, 0, A) },
        { "of a modelled kind", Other(10, 0, A), KernelEvent.SyscallEnter(20, 0, A, 202) },
    };

    [Theory]
    [MemberData(nameof(KeptAfter))]
    public void An_event_that_could_tell_something_is_kept(string why, KernelEvent previous, KernelEvent e)
    {
        // The same thread's event after it on the same cpu would let a redundant one go.
        var next = Other(Math.Max(previous.Timestamp, e.Timestamp) + 10, e.Cpu, e.CurrentTid);
        var (delivered, leftOut) = Filter(previous, e, next);

        Assert.True(leftOut == 0, why);
        Assert.Equal([previous, e, next], delivered);
    }

    [Fact]
    public void A_held_event_is_kept_when_the_next_event_is_earlier()
    {
        var (delivered, leftOut) = Filter(Other(10, 0, A), Other(30, 0, A), Other(20, 0, A));

        Assert.Equal(0, leftOut);
        Assert.Equal([10L, 30, 20], delivered.Select(e => e.Timestamp));
    }

    [Fact]
    public void Only_the_built_in_analyses_may_have_events_left_out()
    {
        using var builtIn = new AnalysisSession(AnalysisSelection.All);
        using var other =
            new AnalysisSession(AnalysisSelection.All, catalog: new AnalysisCatalog(Analyses.Catalog.All));
        Assert.True(builtIn.MayLeaveOutRedundantEvidence);
        Assert.False(other.MayLeaveOutRedundantEvidence);
    }

    public static TheoryData<string> Traces => new()
    {
        Path.Combine(RepoPaths.SampleTraces, "timemutex-mutex", "trace.dat"),
        Path.Combine(RepoPaths.SampleTraces, "timemutex-cs", "trace.dat"),
        Path.Combine(RepoPaths.SampleTraces, "perf-timemutex-mutex", "capture.perf.data"),
    };

    /// <summary>
    /// Every result the same with the filter as without: report.json (every analysis, every thread) and the focused
    /// timeline, with the analyses on the reading thread and beside it; and the filter did leave events out.
    /// </summary>
    [Theory]
    [MemberData(nameof(Traces))]
    public void Every_result_is_the_same_with_and_without_the_filter(string trace) => SameResults(trace);

    [ExternalTraceTheory("tracecmd/lisa_example_rtapp_v6.dat", "tracecmd/lisa_trappy_tests_trace_v6.dat",
        "tracecmd/hip24_test_host_kvm_v7zlib.dat", "tracecmd/hip24_test_guest_v7zlib.dat")]
    [InlineData("tracecmd/lisa_example_rtapp_v6.dat")]
    [InlineData("tracecmd/lisa_trappy_tests_trace_v6.dat")]
    [InlineData("tracecmd/hip24_test_host_kvm_v7zlib.dat")]
    [InlineData("tracecmd/hip24_test_guest_v7zlib.dat")]
    public void Every_result_is_the_same_with_and_without_the_filter_on_third_party_traces(string file) =>
        SameResults(ExternalTraces.PathOf(file));

    private void SameResults(string trace)
    {
        var leftOut = LeftOut(trace);
        output.WriteLine($"{Path.GetFileName(trace)}: {leftOut:N0} events left out");
        Assert.True(leftOut > 0, "the trace has no event the filter leaves out: the comparison would prove nothing");
        foreach (var threads in new[] { 0, 1 })
        {
            var with = Analyze(trace, threads, leaveOut: true);
            var without = Analyze(trace, threads, leaveOut: false);
            Assert.Equal(ReportJson.Serialize(without.Report), ReportJson.Serialize(with.Report));
            Assert.Equal(without.Timeline is null, with.Timeline is null);
            if (with.Timeline is { } a && without.Timeline is { } b) TimelineAssert.Same(b, a);
        }
    }

    private static AnalysisResult Analyze(string trace, int threads, bool leaveOut) =>
        TraceAnalysis.Run(new AnalysisRequest(trace)
        {
            Timeline = TimelineWindow.Default,
            FocusTimeline = true,
            AnalysisThreads = threads,
            LeaveOutRedundantEvidence = leaveOut,
        });

    private static long LeftOut(string trace)
    {
        using var reader = TraceFormats.All.Open(trace, TraceReadOptions.Default);
        return RedundantEvidenceFilter.LeftOutOf(reader);
    }
}
