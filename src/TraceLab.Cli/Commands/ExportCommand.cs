using System.CommandLine;
using System.Diagnostics;
using Spectre.Console;
using TraceLab.Cli.CommandLine;
using TraceLab.Export;
using TraceLab.Formats.Registry;

namespace TraceLab.Cli.Commands;

/// <summary>
/// `tracelab export TRACE --to FORMAT [-o FILE]`: the trace and TraceLab's analysis for another viewer.
/// </summary>
public sealed class ExportCommand(IAnsiConsole console)
{
    public sealed record Settings(string TraceFile, ITraceExporter Exporter)
    {
        /// <summary>The file to write; null: the trace's name with the exporter's extension.</summary>
        public string? Output { get; init; }
        public bool Force { get; init; }
        public int? Pid { get; init; }
        public bool Salvage { get; init; }
        /// <summary>trace.dat: the buffer (instance) to read; null: the reader's default.</summary>
        public string? Buffer { get; init; }
        /// <summary>`--no-demangle`: C++ names in stacks as linked.</summary>
        public bool NoDemangle { get; init; }
    }

    private readonly IAnsiConsole _console = console;

    public static Command Create(IAnsiConsole console)
    {
        var trace = SharedOptions.ExistingTraceFile($"trace file ({string.Join(", ", TraceFiles.Formats.Names)})");
        var to = ExporterOption();
        var output = new Option<string?>("--output", "-o")
        {
            Description = "output file (default: the trace's name with the format's extension)",
        };
        var force = SharedOptions.Force("replace an existing output file");
        var pid = SharedOptions.Pid(
            "process whose threads and lock objects get analysis tracks (default: the workload's, from its markers)");
        var salvage = SharedOptions.Salvage("export a truncated or corrupt trace up to the damage on each CPU");
        var description = "write a trace with TraceLab's analysis for another viewer: " +
            string.Join("; ", TraceExporters.All.Select(e => $"{e.Name}, {e.Description}"));
        var buffer = SharedOptions.Buffer();
        var noDemangle = SharedOptions.NoDemangle();
        var command = new Command("export", description)
        {
            trace, to, output, force, pid, salvage, buffer, noDemangle,
        };
        CommandActions.Set(command, r => new ExportCommand(console).Run(
            new Settings(r.GetValue(trace)!, r.GetValue(to)!)
            {
                Output = r.GetValue(output),
                Force = r.GetValue(force),
                Pid = r.GetValue(pid),
                Salvage = r.GetValue(salvage),
                Buffer = r.GetValue(buffer),
                NoDemangle = r.GetValue(noDemangle),
            }));
        return command;
    }

    /// <summary><c>--to NAME</c>, typed as the exporter; names from <see cref="TraceExporters.All"/>.</summary>
    private static Option<ITraceExporter> ExporterOption()
    {
        var names = string.Join(", ", TraceExporters.Names);
        var option = new Option<ITraceExporter>("--to")
        {
            Description = $"output format: {names}",
            Required = true,
            CustomParser = r => SharedOptions.ParseOrError(r, name => TraceExporters.Find(name)
                ?? throw new ArgumentException($"unknown export format '{name}': valid formats are {names}"), null!),
        };
        option.CompletionSources.Add(TraceExporters.Names.ToArray());
        return option;
    }

    public int Run(Settings s)
    {
        var traceFile = Path.GetFullPath(s.TraceFile);
        InputFile.Check(traceFile);
        var final = Path.GetFullPath(s.Output ?? Path.ChangeExtension(traceFile, s.Exporter.Extension));
        if (final == traceFile) throw new UsageException($"{final} is the input trace: choose another -o");
        if (Directory.Exists(final)) throw new UsageException($"{final} is a directory: -o takes a file name");
        if (File.Exists(final) && !s.Force)
            throw new UsageException($"{final} already exists: add --force to replace it");
        var dir = Path.GetDirectoryName(final)!;
        Directory.CreateDirectory(dir);

        var watch = Stopwatch.StartNew();
        using var reader =
            TraceFiles.Open(traceFile, new TraceReadOptions { Salvage = s.Salvage, BufferName = s.Buffer });
        var tmp = Path.Combine(dir, $".{Path.GetFileName(final)}.tmp");
        IExportSummary summary;
        try
        {
            using (var fs = new FileStream(tmp, FileMode.Create, FileAccess.Write, FileShare.None, 1 << 16))
            {
                summary = s.Exporter.Export(
                    reader, fs, new ExportOptions
                    {
                        Pid = s.Pid,
                        Annotator = new FindingsAnnotator(),
                        Demangle = !s.NoDemangle,
                    });
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
        var lines = summary.Lines(new ExportedFile(final, new FileInfo(final).Length, watch.Elapsed));
        for (var i = 0; i < lines.Count; i++)
            _console.MarkupLine(i == 0 ? Markup.Escape(lines[i]) : $"[grey]{Markup.Escape(lines[i])}[/]");
        return ExitCodes.Ok;
    }
}
