using System.Globalization;

namespace TraceLab.Export.Perfetto;

/// <summary>What an export wrote, for the command's summary line and for tests.</summary>
public sealed record PerfettoExportSummary(
    long Packets, long Switches, long Wakings, long WakeupNews, long Migrations, long Exits, long Prints,
    long SkippedEvents, long EpisodeSlices, long HandoffFlows, long FutileInstants, long MarkerInstants,
    ExportProcess? Process) : IExportSummary
{
    /// <summary>task_newtask events written (forks that say whether they made a thread or a process).</summary>
    public long NewTasks { get; init; }

    /// <summary>sched_process_free events written, each after an exited thread's dead switch-out.</summary>
    public long Frees { get; init; }

    /// <summary>Off-CPU slices written with their blocking stacks (a trace with stacks; else 0).</summary>
    public long OffCpuSlices { get; init; }

    /// <summary>Waker instants written with the waker's stack.</summary>
    public long WakerInstants { get; init; }

    /// <summary>Distinct call stacks the slices and instants carry.</summary>
    public int Callstacks { get; init; }

    public IReadOnlyList<string> Lines(ExportedFile file)
    {
        var inv = CultureInfo.InvariantCulture;
        var size = string.Create(inv, $"{file.Bytes / 1048576.0:0.0} MiB");
        var written = string.Create(inv,
            $"Perfetto trace {file.Path}: {size}, {Packets:N0} packets in {file.Elapsed.TotalSeconds:0.00} s");
        var events = string.Create(inv, $"{Switches:N0} sched_switch, {Wakings:N0} sched_waking, {Prints:N0} markers");
        var analysis = string.Create(inv,
            $"{EpisodeSlices:N0} convoy episodes, {HandoffFlows:N0} handoff flows, {FutileInstants:N0} futile wakeups");
        if (OffCpuSlices > 0)
            analysis += string.Create(inv,
                $"; {OffCpuSlices:N0} off-CPU slices and {WakerInstants:N0} wakings with their stacks " +
                $"({Callstacks:N0} distinct)");
        return
        [
            $"{written} — {events}; {analysis}",
            "Open it at https://ui.perfetto.dev (Open trace file); see docs/viewers.md",
        ];
    }
}
