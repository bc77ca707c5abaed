using TraceLab.Analyzers;
using TraceLab.Core;
using TraceLab.Reporting.Charts;
using TraceLab.Workloads;

namespace TraceLab.Reporting;

/// <summary>
/// Assembles report.json's model from a finished analysis pass and, when known, the workload's own result.
/// </summary>
public static class ReportBuilder
{
    private const int TopWakers = 3;

    /// <param name="chartsBuilt">Given the charts' data as soon as it is built, before the sections (the CLI draws
    /// them on another thread meanwhile); the same data is the report's <see cref="RunReport.Charts"/>.</param>
    /// <param name="stacks">The call stacks of lock waits, when the trace recorded them (the findings name the locks
    /// they find).</param>
    /// <param name="notices">Said before every other warning (what the capture noticed about the machine).</param>
    /// <param name="excludePids">Processes left out of every list, ranking, section and finding, their cost said once
    /// (`--exclude-pid`).</param>
    public static RunReport Build(TraceInfo info, ThreadTable names, AnalysisSession analyses, WorkloadResult? workload,
        RunSection? run = null, bool partial = false, int? pidOverride = null,
        int topProcesses = SystemOverview.DefaultTop, Action<ReportCharts>? chartsBuilt = null,
        Stacks.StacksSection? stacks = null, IReadOnlyList<string>? notices = null,
        IReadOnlyList<int>? excludePids = null)
    {
        var warnings = TraceWarnings(notices, info, analyses.Accounting);
        var scope = ReportScope.Of(analyses.Accounting, names, workload, pidOverride, excludePids);
        RegionWarnings(warnings, info, analyses.Accounting, scope.Pid, scope.Targets.Count > 0);
        var threads = ThreadSections(scope.Tids, scope.Pid, names, analyses, workload);
        var (processes, selfCost, excludedCost) =
            scope.Self.Split(ProcessesReport.Build(analyses, names, scope.Tids.ToHashSet(), run, scope.Pid));
        var context = new ReportContext(analyses, scope.Tids, names, workload, RegionNs: scope.EndNs - scope.BeginNs);
        // The charts read only the finished analyses: built first, they can be drawn while the sections are built.
        var charts = ReportChartsBuilder.Build(context, analyses.Timeline?.Result());
        chartsBuilt?.Invoke(charts);
        foreach (var analysis in AnalysisReports.All) warnings.AddRange(analysis.Warnings(context));

        var report = new RunReport
        {
            Run = run,
            Capture = Capture(info, analyses.Accounting, partial),
            Region = scope.Region(),
            Process = scope.Pid == 0 ? null : Process(scope.Pid, names, workload, run, threads),
            Analyses = [.. AnalysisReports.Format(analyses.Selection)],
            Threads = threads,
            Processes = processes,
            RestOfSystem = scope.Targets.Count > 0 ? ProcessesReport.Rest(processes) : null,
            System = scope.Targets.Count > 0 ? null : SystemOverview.Build(info, analyses.Accounting, processes,
                topProcesses, analyses.Instances.ReusedTids.Count, scope.EndNs - scope.BeginNs),
            Self = selfCost,
            Excluded = excludedCost,
            Stacks = stacks?.Of(ReportedProcesses(scope, analyses.Accounting, names)),
            Warnings = warnings,
            Charts = charts,
        };
        BuildSections(report, context with { Report = report });
        Qualify(report, warnings);
        return report;
    }

    /// <summary>
    /// What the report is about: the measured region, the process (0: none) and the target processes, TraceLab's own
    /// and the excluded processes, and the threads reported.
    /// </summary>
    private sealed record ReportScope(MeasuredRegion Measured, long BeginNs, long EndNs, int Pid,
        IReadOnlyList<int> Targets, SelfExclusion Self, List<int> Tids)
    {
        public static ReportScope Of(ThreadAccounting accounting, ThreadTable names, WorkloadResult? workload,
            int? pidOverride, IReadOnlyList<int>? excludePids)
        {
            var region = accounting.Region;
            var (pid, targets) = ReportBuilder.Targets(region, workload, pidOverride);
            // TraceLab's own processes (a trace it recorded names them) are in no list, ranking or section.
            var self = SelfExclusion.Of(accounting.Lineage, names, region, targets, excludePids);
            var tids = SelectThreads(accounting, names, workload, targets).Where(t => !self.Excludes(t)).ToList();
            return new ReportScope(region, region.HasBegin ? region.Begin : accounting.FirstTimestamp,
                region.HasEnd ? region.End : accounting.LastTimestamp, pid, targets, self, tids);
        }

        public RegionSection Region() => new()
        {
            Source = !Measured.HasBegin ? "whole-trace" : Measured.FromTarget ? "target" : "markers",
            BeginNs = BeginNs,
            EndNs = EndNs,
        };
    }

    /// <summary>
    /// Which processes' lock stacks the report shows: those of its threads (TraceLab's own and the excluded left out;
    /// with a target, the target's); every process when the report leaves none out.
    /// </summary>
    private static Func<int, bool> ReportedProcesses(ReportScope scope, ThreadAccounting accounting, ThreadTable names)
    {
        if (scope.Targets.Count == 0 && scope.Self.Pids.Count == 0 && scope.Self.UserPids.Count == 0)
            return _ => true;
        var reported = scope.Tids.Select(t => accounting.Lineage.ReportedProcessOf(t, names)).ToHashSet();
        return reported.Contains;
    }

    /// <summary>What the losses and the kernel's own accounting qualify, once every section is built.</summary>
    private static void Qualify(RunReport report, List<string> warnings)
    {
        LossFlags.Apply(report.Capture, report.Threads, report.Smp);
        if (LossFlags.Warning(report.Capture, report.Threads) is { } loss) warnings.Add(loss);
        warnings.AddRange(RusageAgreement.Warnings(report));
    }

    private static List<ThreadSection> ThreadSections(List<int> tids, int pid, ThreadTable names,
        AnalysisSession analyses, WorkloadResult? workload)
    {
        var accounting = analyses.Accounting;
        var byTid = workload?.Threads.ToDictionary(t => t.Tid) ?? [];
        var reused = analyses.Instances.ReusedTids;
        return tids.Select(tid => Thread(tid, pid, accounting.Lineage.ReportedProcessOf(tid, names), names,
            accounting.Stats(tid), byTid.GetValueOrDefault(tid), reused, accounting)).ToList();
    }

    /// <summary>What the trace itself qualifies: damage, formats and events it could not read, no switches.</summary>
    private static List<string> TraceWarnings(IReadOnlyList<string>? notices, TraceInfo info,
        ThreadAccounting accounting)
    {
        // The capture's notices come before everything the trace itself qualifies.
        var warnings = new List<string>(notices ?? []);
        // First: a salvaged trace qualifies every number below it.
        if (info.Damage is { } damage) warnings.Add(damage);
        if (info.SkippedFormats > 0)
            warnings.Add($"{info.SkippedFormats} event formats in the trace could not be parsed (newer kernel?): their "
                + $"events were skipped");
        if (info.UnknownEvents > 0)
            warnings.Add($"{info.UnknownEvents} events had no format in the trace: skipped");
        // Next: without switches every run, ready and wait figure below is an inference.
        if (accounting.SwitchEvents == 0)
            warnings.Add("the trace has no context switches (sched_switch; ETW: CSwitch): run, ready and wait times " +
                "are only inferred from the events each thread logged, and no lock wait can be seen; record context " +
                "switches to analyse contention (docs/metrics.md#switchevents)");
        return warnings;
    }

    /// <summary>
    /// The process the report is about (0: none) and the target processes: a chosen --pid or a workload is one;
    /// `trace --pid A,B` makes every listed process a target.
    /// </summary>
    private static (int Pid, IReadOnlyList<int> Targets) Targets(MeasuredRegion region, WorkloadResult? workload,
        int? pidOverride)
    {
        var pid = pidOverride ?? (workload?.Pid > 0 ? workload.Pid : region.MarkerTid > 0 ? region.MarkerTid
            : region.TargetPids.Count > 0 ? region.TargetPids[0] : 0);
        var fromTargetMarkers = pidOverride is null && workload is null && region.MarkerTid == 0
            && region.TargetPids.Count > 0;
        return (pid, fromTargetMarkers ? region.TargetPids : pid > 0 ? [pid] : []);
    }

    /// <summary>What the region, the losses and the repairs qualify.</summary>
    private static void RegionWarnings(List<string> warnings, TraceInfo info, ThreadAccounting accounting, int pid,
        bool hasTargets)
    {
        var region = accounting.Region;
        if (pid == 0 && !hasTargets)
            warnings.Add("no target process (no markers, no workload result, no --pid): the report opens with the " +
                "system overview; report.json has every thread");
        if (!region.HasBegin) warnings.Add("no TRACELAB_REGION_BEGIN marker: the report covers the whole trace");
        else if (!region.HasEnd)
            warnings.Add($"no {(region.FromTarget ? "TRACELAB_TARGET_END" : "TRACELAB_REGION_END")} marker: " +
                "the region runs to the end of the trace (partial run?)");
        if (info.LostEvents > 0)
            warnings.Add($"{info.LostEvents} events were lost (per CPU: "
                + $"{string.Join(", ", info.LostEventsPerCpu ?? [])}): run, ready and wait times may be misattributed "
                + $"near the gaps");
        if (accounting.ChainBreaksInRegion > 0)
            warnings.Add($"{accounting.ChainBreaksInRegion} broken switch chains repaired in the region (switches that "
                + $"were never logged; see docs/metrics.md)");
    }

    private static CaptureSection Capture(TraceInfo info, ThreadAccounting accounting, bool partial) => new()
    {
        Backend = info.Backend,
        TraceFile = info.TraceFile,
        Events = info.EventCount,
        SwitchEvents = accounting.SwitchEvents,
        LostEvents = info.LostEvents,
        LostEventsPerCpu = info.LostEventsPerCpu,
        PagesWithMissedEvents = info.PagesWithMissedEvents,
        ChainBreaks = accounting.ChainBreaks,
        ChainBreaksInRegion = accounting.ChainBreaksInRegion,
        Cpus = info.CpuCount,
        DurationNs = accounting.LastTimestamp > accounting.FirstTimestamp
            ? accounting.LastTimestamp - accounting.FirstTimestamp : 0,
        Clock = info.TraceClock,
        Kernel = info.KernelRelease,
        Partial = partial,
    };

    private static ProcessSection Process(int pid, ThreadTable names, WorkloadResult? workload, RunSection? run,
        List<ThreadSection> threads)
    {
        // A workload measures itself; a program TraceLab ran is measured by TraceLab (the run section).
        var times = workload?.Process ?? run?.Rusage;
        return new()
        {
            Pid = pid,
            // As the process table names it (a main thread that never ran in the trace has no name of its own: a
            // server's, traced with --pid), unless a workload names itself.
            Name = workload is not null && !names.TryGetName(pid, out _) ? workload.Workload
                : ProcessesReport.NameOf(pid, threads.Select(t => t.Tid), names),
            RealNs = workload?.ElapsedNs ?? run?.ElapsedNs,
            UserNs = times?.UserNs,
            SystemNs = times?.SystemNs,
            RusageVoluntarySwitches = times?.VoluntarySwitches,
            RusageInvoluntarySwitches = times?.InvoluntarySwitches,
            TracedRunNs = threads.Sum(t => t.RunNs),
            TracedReadyNs = threads.Sum(t => t.ReadyNs),
            TracedWaitNs = threads.Sum(t => t.WaitNs),
            VoluntarySwitches = threads.Sum(t => t.VoluntarySwitches),
            InvoluntarySwitches = threads.Sum(t => t.InvoluntarySwitches),
            WorkloadMetrics =
                workload is { Metrics.Count: > 0 } ? new Dictionary<string, double>(workload.Metrics) : null,
        };
    }

    /// <summary>
    /// Each analysis's section, in registration order (the findings last read the others), then the locks the
    /// stacks named put into the findings' text.
    /// </summary>
    private static void BuildSections(RunReport report, ReportContext building)
    {
        foreach (var analysis in AnalysisReports.All)
            if (analysis.JsonName is not null && analysis.Build(building) is { } section)
                report.SetSection(analysis, section);
        Stacks.StacksReportBuilder.NameLocksInFindings(report);
    }

    private static List<int> SelectThreads(ThreadAccounting accounting, ThreadTable names, WorkloadResult? workload,
        IReadOnlyList<int> pids)
    {
        var set = new SortedSet<int>();
        foreach (var pid in pids)
        {
            foreach (var tid in accounting.Lineage.Descendants(pid, accounting.Threads.Keys)) set.Add(tid);
            set.Add(pid);
            // Threads that existed before the capture (attach): TraceLab listed them, or the trace's events state
            // their process (perf samples, ETW thread events); and what they forked.
            foreach (var (tid, process) in accounting.Region.ProcessOfThread.Concat(names.Processes))
                if (process == pid)
                    foreach (var t in accounting.Lineage.Descendants(tid, accounting.Threads.Keys)) set.Add(t);
        }
        if (workload is not null)
            foreach (var t in workload.Threads) set.Add(t.Tid);
        if (set.Count == 0)
            foreach (var (tid, s) in accounting.Threads)
                if (tid > 0 && s.RunNs + s.ReadyNs + s.WaitNs > 0) set.Add(tid);
        // Threads that never ran inside the region (created and gone before it) only add noise.
        return set.Where(tid => pids.Contains(tid)
            || accounting.Threads.TryGetValue(tid, out var s) && s.RunNs + s.ReadyNs + s.WaitNs > 0).ToList();
    }

    private static ThreadSection Thread(int tid, int pid, int process, ThreadTable names, ThreadStats s,
        WorkloadThread? w, IReadOnlySet<int> reusedTids, ThreadAccounting accounting)
    {
        var kernelTid = ThreadIds.KernelTid(tid);
        var reused = reusedTids.Contains(kernelTid);
        return new()
        {
            Tid = tid,
            KernelTid = reused ? kernelTid : null,
            Instance = reused ? ThreadIds.Instance(tid) : null,
            StartNs = reused && accounting.Lineage.Born.TryGetValue(tid, out var born) ? born : null,
            EndNs = reused && accounting.Lineage.Ended.TryGetValue(tid, out var ended) ? ended : null,
            Pid = process,
            Name = names.NameOf(tid),
            Role = tid == pid ? "main" : w is not null ? w.Role ?? $"worker {w.Index}" : null,
            RunNs = s.RunNs,
            ReadyNs = s.ReadyNs,
            WaitNs = s.WaitNs,
            VoluntarySwitches = s.VoluntarySwitches,
            InvoluntarySwitches = s.InvoluntarySwitches,
            Migrations = s.Migrations,
            WakeupsReceived = s.WakeupsReceived,
            WakeupsGiven = s.WakeupsGiven,
            RepairedStarts = s.RepairedStarts,
            ReadyLatency = LatencySection.From(s.ReadyLatency),
            TopWakers = s.Wakers.OrderByDescending(kv => kv.Value).ThenBy(kv => kv.Key).Take(TopWakers)
                .Select(kv => new WakerSection
                {
                    Tid = kv.Key,
                    Name = kv.Key < 0 ? "<irq>" : names.NameOf(kv.Key),
                    Count = kv.Value
                }).ToList(),
            Workload = w is null ? null : new WorkloadThreadSection
            {
                UserNs = w.UserNs,
                SystemNs = w.SystemNs,
                VoluntarySwitches = w.VoluntarySwitches,
                InvoluntarySwitches = w.InvoluntarySwitches,
                Iterations = w.Iterations,
            },
        };
    }
}
