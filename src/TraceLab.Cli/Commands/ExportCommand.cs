using System.Diagnostics;
using Spectre.Console;
using TraceLab.Export.Perfetto;

namespace TraceLab.Cli.Commands;

/// <summary>`tracelab export TRACE --to perfetto [-o FILE]`: the trace and TraceLab's analysis as a Perfetto trace.</summary>
public sealed class ExportCommand
{
    public static readonly string[] Formats = ["perfetto"];

    private readonly IAnsiConsole _console;

    public ExportCommand(IAnsiConsole console) => _console = console;

    public int Run(string traceFile, string format, string? outFile, bool force, int? pid, bool salvage = false)
    {
        if (!Formats.Contains(format, StringComparer.OrdinalIgnoreCase))
            throw new UsageException($"unknown export format '{format}': valid formats are {string.Join(", ", Formats)}");
        traceFile = Path.GetFullPath(traceFile);
        if (!File.Exists(traceFile)) throw new UsageException($"{traceFile}: no such file");
        var final = Path.GetFullPath(outFile ?? Path.ChangeExtension(traceFile, ".pftrace"));
        if (final == traceFile) throw new UsageException($"{final} is the input trace: choose another -o");
        if (Directory.Exists(final)) throw new UsageException($"{final} is a directory: -o takes a file name");
        if (File.Exists(final) && !force) throw new UsageException($"{final} already exists: add --force to replace it");
        var dir = Path.GetDirectoryName(final)!;
        Directory.CreateDirectory(dir);

        var watch = Stopwatch.StartNew();
        using var reader = TraceFiles.Open(traceFile, salvage);
        var tmp = Path.Combine(dir, $".{Path.GetFileName(final)}.tmp");
        PerfettoExportSummary summary;
        try
        {
            using (var fs = new FileStream(tmp, FileMode.Create, FileAccess.Write, FileShare.None, 1 << 16))
            {
                summary = PerfettoExporter.Export(reader, fs, pid);
                fs.Flush(flushToDisk: true);
            }
            File.Move(tmp, final, overwrite: true);
        }
        catch
        {
            OutputDirectory.TryDelete(tmp);
            throw;
        }
        watch.Stop();
        var size = new FileInfo(final).Length;
        _console.MarkupLine(Markup.Escape(
            $"Perfetto trace {final}: {size / 1048576.0:0.0} MiB, {summary.Packets:N0} packets in {watch.Elapsed.TotalSeconds:0.00} s — " +
            $"{summary.Switches:N0} sched_switch, {summary.Wakings:N0} sched_waking, {summary.Prints:N0} markers; " +
            $"{summary.EpisodeSlices:N0} convoy episodes, {summary.HandoffFlows:N0} handoff flows, {summary.FutileInstants:N0} futile wakeups"));
        _console.MarkupLine("[grey]Open it at https://ui.perfetto.dev (Open trace file); see docs/viewers.md[/]");
        return ExitCodes.Ok;
    }
}
