using System.CommandLine;
using System.Globalization;
using System.Text;
using Spectre.Console;
using TraceLab.Cli.CommandLine;
using TraceLab.Sweeps;
using TraceLab.Sweeps.Claims;

namespace TraceLab.Cli.Commands;

/// <summary>
/// `tracelab claims`: every seed claim with the latest verdict in the results folder, the figures behind it, the
/// machine and whether it can decide the claim; also written as claims.md. `--run` first measures every predefined
/// sweep the claims need (<see cref="ClaimsRun"/>), resuming whatever an earlier run left.
/// </summary>
public sealed class ClaimsCommand(IAnsiConsole console)
{
    public sealed record Settings
    {
        public bool Run { get; init; }
        public bool Quick { get; init; }
        /// <summary>Traced runs (RESULTS/full-traced or quick-traced): with --run, every run is captured.</summary>
        public bool Trace { get; init; }
        public string Results { get; init; } = DefaultResults;
        /// <summary>Also write the markdown report here (an existing file only with <see cref="Force"/>).</summary>
        public string? Markdown { get; init; }
        public bool Force { get; init; }
        public int TimeoutSeconds { get; init; } = DefaultTimeoutSeconds;
    }

    public const string DefaultResults = "results";
    public const string MarkdownName = "claims.md";
    private const int DefaultTimeoutSeconds = 600;

    private readonly IAnsiConsole _console = console;

    public static Command Create(IAnsiConsole console)
    {
        var run = new Option<bool>("--run")
        {
            Description =
                "first run every predefined sweep the claims need (resumes an interrupted run; prints an estimate)",
        };
        var quick = new Option<bool>("--quick")
        {
            Description = "smaller sizes (about a fifth of the work): results/quick instead of results/full",
        };
        var trace = new Option<bool>("--trace")
        {
            Description = "traced runs, as sweep --trace (needs root): RESULTS/full-traced or RESULTS/quick-traced",
        };
        var results = new Option<string>("--results")
        {
            Description = "results folder (default: ./results; the run goes to RESULTS/full or RESULTS/quick)",
            DefaultValueFactory = _ => DefaultResults,
        };
        var markdown = new Option<string?>("--markdown")
        {
            Description = "also write the report as markdown to this file (RESULTS/MODE/claims.md is always written)",
        };
        var force = SharedOptions.Force("overwrite the --markdown file if it exists");
        var timeout = SharedOptions.Timeout("with --run: kill a run after this many seconds and record it as failed");
        timeout.DefaultValueFactory = _ => DefaultTimeoutSeconds;
        var command = new Command("claims",
            "the seed claims with the latest verdicts measured on this machine (--run measures them first)")
        {
            run, quick, trace, results, markdown, force, timeout,
        };
        CommandActions.Set(command, (r, _) => new ClaimsCommand(console).RunAsync(new Settings
        {
            Run = r.GetValue(run),
            Quick = r.GetValue(quick),
            Trace = r.GetValue(trace),
            Results = r.GetValue(results) ?? DefaultResults,
            Markdown = r.GetValue(markdown),
            Force = r.GetValue(force),
            TimeoutSeconds = r.GetValue(timeout),
        }));
        return command;
    }

    public async Task<int> RunAsync(Settings s)
    {
        if (string.IsNullOrWhiteSpace(s.Results)) throw new UsageException("--results needs a folder");
        var results = Path.GetFullPath(s.Results);
        if (File.Exists(results)) throw new UsageException($"--results {results} is a file, not a folder");
        var directory = ClaimsRunPlan.ModeDirectory(results, s.Quick, s.Trace);
        // A results folder this user cannot look into would otherwise read as "no results yet".
        if (!Directory.Exists(directory) && InputFile.Problem(directory) is { Usage: false } unreachable)
            throw new UnauthorizedAccessException(unreachable.Message);
        var markdown = s.Markdown is null ? null : CheckMarkdownTarget(s.Markdown, s.Force);

        // Held until the report is written: a second Ctrl-C or a closed terminal does not cut the report short.
        using var interruption = s.Run ? new Interruption(hangUp: true) : null;
        var interrupted = false;
        if (interruption is not null)
        {
            if (s.TimeoutSeconds < 0) throw new UsageException("--timeout must be 0 (no limit) or more seconds");
            var run = new ClaimsRun(_console, directory, s.Quick, TimeSpan.FromSeconds(s.TimeoutSeconds), s.Trace);
            interrupted = !await run.RunAsync(interruption.Token);
        }
        else if (!Directory.Exists(directory))
        {
            var none = $"no results in {directory} yet: "
                + $"run `tracelab claims --run{Flags(s)}` to measure the claims";
            _console.MarkupLine($"[yellow]{Markup.Escape(none)}[/]");
        }

        var report = ClaimsReportBuilder.Build(directory, s.Quick, MachineInfo.Current(), s.Trace);
        var written = DateTimeOffset.UtcNow;
        var text = ClaimsReportMarkdown.Write(report, written);
        // The files first: after a hang-up they are the only output anyone will read.
        if (Directory.Exists(directory)) WriteAtomically(Path.Combine(directory, MarkdownName), text);
        if (markdown is not null) WriteAtomically(markdown, text);
        new ClaimsTerminal(_console).Render(report, written);
        var inResults = Directory.Exists(directory) ? Path.Combine(directory, MarkdownName) : null;
        var where = string.Join(" and ", new[] { inResults, markdown }.OfType<string>());
        if (where.Length > 0) _console.MarkupLine($"[bold]Report[/] {Markup.Escape(where)}");
        if (interrupted)
        {
            var note = $"interrupted: every finished run is kept in {directory}; "
                + $"run `tracelab claims --run{Flags(s)}` again to continue";
            _console.MarkupLine($"[yellow]{Markup.Escape(note)}[/]");
            return ExitCodes.Interrupted;
        }
        return ExitCodes.Ok;
    }

    private static string Flags(Settings s) => ClaimsRunPlan.Flags(s.Quick, s.Trace);

    private static string CheckMarkdownTarget(string path, bool force)
    {
        var full = Path.GetFullPath(path);
        if (Directory.Exists(full)) throw new UsageException($"--markdown {full} is a folder, not a file");
        if (File.Exists(full) && !force)
            throw new UsageException($"--markdown {full} exists: add --force to overwrite it");
        var parent = Path.GetDirectoryName(full);
        if (parent is not null && !Directory.Exists(parent))
            throw new UsageException($"--markdown: folder {parent} does not exist");
        return full;
    }

    /// <summary>Temporary file, flush, rename: an interrupted write never leaves half a report.</summary>
    private static void WriteAtomically(string path, string text)
    {
        var tmp = Path.Combine(Path.GetDirectoryName(path) ?? ".", $".{Path.GetFileName(path)}.tmp");
        using (var fs = new FileStream(tmp, FileMode.Create, FileAccess.Write, FileShare.None))
        {
            fs.Write(Encoding.UTF8.GetBytes(text));
            fs.Flush(flushToDisk: true);
        }
        File.Move(tmp, path, overwrite: true);
    }

    internal static string I(FormattableString s) => s.ToString(CultureInfo.InvariantCulture);
}
