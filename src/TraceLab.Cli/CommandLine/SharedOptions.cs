using System.CommandLine;
using System.CommandLine.Parsing;
using System.Globalization;
using TraceLab.Analyzers;
using TraceLab.Analyzers.Parallel;
using TraceLab.Analyzers.Timeline;
using TraceLab.Analyzers.Waits;
using TraceLab.Core.Capture;
using TraceLab.Reporting;

namespace TraceLab.Cli.CommandLine;

/// <summary>
/// Options more than one command takes, each defined once: name, type, default and validation. A command passes its
/// own description where the option means something slightly different for it (where --out writes, say). Invalid
/// values are parse errors, so they end as one line and exit code 2 before the command runs.
/// </summary>
internal static class SharedOptions
{
    public const int MinBufferKb = 64;
    public const int MaxBufferKb = 4 * 1024 * 1024;

    public static Option<string?> Out(string description) => new("--out") { Description = description };

    public static Option<bool> Force(string description) => new("--force") { Description = description };

    public static Option<int?> Pid(string description)
    {
        var option = new Option<int?>("--pid") { Description = description };
        option.Validators.Add(r =>
        {
            // A value that is not one number: GetValueOrDefault would throw (a stack trace, not a usage error).
            if (r.Tokens.Count > 0 && !int.TryParse(r.Tokens[^1].Value, NumberStyles.Integer,
                    CultureInfo.InvariantCulture, out _))
                r.AddError($"--pid takes one process id, not '{r.Tokens[^1].Value}'");
            else if (r.GetValueOrDefault<int?>() is <= 0) r.AddError("--pid must be a positive process id");
        });
        return option;
    }

    /// <summary>
    /// `--exclude-pid 12,34`: processes the report leaves out of every list, ranking, section and finding, their cost
    /// said once (docs/metrics.md#self-exclusion). Anything but positive process ids separated by commas is a usage
    /// error.
    /// </summary>
    public static Option<string?> ExcludePids()
    {
        var option = new Option<string?>("--exclude-pid")
        {
            Description = "processes to leave out of the report (comma-separated pids: a load generator, an agent); " +
                "their cost is said once",
        };
        option.Validators.Add(r =>
        {
            if (r.Tokens.Count > 0 && !TryPidList(r.Tokens[^1].Value, out _))
                r.AddError($"--exclude-pid takes process ids separated by commas, not '{r.Tokens[^1].Value}'");
        });
        return option;
    }

    /// <summary>The pids of a validated `--exclude-pid` value (none when the option was not given).</summary>
    public static IReadOnlyList<int> PidList(string? text) =>
        text is not null && TryPidList(text, out var pids) ? pids : [];

    private static bool TryPidList(string text, out List<int> pids)
    {
        pids = [];
        foreach (var part in text.Split(','))
        {
            if (!int.TryParse(part.Trim(), NumberStyles.None, CultureInfo.InvariantCulture, out var pid) || pid <= 0)
                return false;
            pids.Add(pid);
        }
        return pids.Count > 0;
    }

    /// <summary>report.html without charts and no chart-* files (docs/metrics.md, "Charts").</summary>
    public static Option<bool> NoCharts() => new("--no-charts")
    {
        Description = "do not draw the charts (report.html and chart-*.png/svg): a little faster",
    };

    public static Option<bool> Salvage(string description) => new("--salvage") { Description = description };

    /// <summary>
    /// trace.dat: which ring buffer (trace-cmd instance) to read; the top level by default. A name the file does not
    /// have is refused with the list of those it has.
    /// </summary>
    public static Option<string?> Buffer() => new("--buffer")
    {
        Description = "trace.dat with several buffers (trace-cmd -B): the instance to read, 'top' for the top level " +
            "(default: the top level, or the first instance with events when it is empty)",
    };

    /// <summary>
    /// `--wait-tags FILE`: stack tags of the user's own (one per line: a wait class and a function name pattern),
    /// tried before the shipped ones when a trace's blocking stacks classify its waits
    /// (docs/metrics.md#wait-tag-files).
    /// </summary>
    public static Option<string?> WaitTags() => new("--wait-tags")
    {
        Description = "a file of stack tags, one per line: a wait class (lock, condition, io, commit, sleep, memory, " +
            "unknown) and a function name pattern ('lock MyMutex::lock*'); tried before the shipped tags on traces " +
            "with blocking stacks (docs/metrics.md#wait-tag-files)",
        HelpName = "FILE",
    };

    /// <summary>
    /// The shipped stack tags with those of <paramref name="file"/> first (null: the shipped ones alone).
    /// </summary>
    /// <exception cref="UsageException">The file is missing or a line is not a class and a pattern.</exception>
    public static WaitStackTags WaitTagsFrom(string? file)
    {
        if (file is null) return WaitStackTags.Default;
        var path = Path.GetFullPath(file);
        InputFile.Check(path);
        try
        {
            return WaitStackTags.Default.With(WaitStackTags.Parse(File.ReadAllText(path), file));
        }
        catch (FormatException e)
        {
            throw new UsageException(e.Message);
        }
    }

    /// <summary>`--no-demangle`: C++ names in stacks as linked (perf script --no-demangle).</summary>
    public static Option<bool> NoDemangle() => new("--no-demangle")
    {
        Description = "name C++ functions in stacks as linked (_ZN13ObjectMonitor6EnterIEP10JavaThread), not " +
            "demangled as perf script prints them (ObjectMonitor::EnterI; docs/formats.md#demangling)",
    };

    public static Option<bool> Stacks() => new("--stacks")
    {
        Description = "record the user and kernel call stacks of every blocking switch and wakeup, so locks are " +
            "named by variable or call site (Linux: perf record --call-graph dwarf beside the trace, " +
            "trace.stacks.perf.data, needs perf; Windows: CSwitch and ReadyThread stack walks)",
    };

    /// <summary>`--call-graph dwarf|fp`: how `--stacks` records user stacks on Linux; it implies --stacks.</summary>
    public static Option<UserStackWalk?> CallGraph() => new("--call-graph")
    {
        Description = "how --stacks records user stacks on Linux (implies --stacks): dwarf (default; an 8 KB copy " +
            "of each stack, unwound with the binaries' .eh_frame: whole without frame pointers, ~8.4 KB a stack) or " +
            "fp (the kernel's frame-pointer walk: ~0.2 KB a stack, whole only through code built with frame pointers)",
        CustomParser = r => ParseOrError<UserStackWalk?>(r, ParseCallGraph, null),
    };

    /// <summary>
    /// What `--stacks` and `--call-graph` ask for: null, no stacks; else how user stacks are recorded (`--call-graph`
    /// alone implies `--stacks`; `--stacks` alone means dwarf).
    /// </summary>
    public static UserStackWalk? StackWalkOf(ParseResult r, Option<bool> stacks, Option<UserStackWalk?> callGraph) =>
        r.GetValue(callGraph) ?? (r.GetValue(stacks) ? UserStackWalk.Dwarf : null);

    private static UserStackWalk? ParseCallGraph(string text) => text switch
    {
        "dwarf" => UserStackWalk.Dwarf,
        "fp" => UserStackWalk.FramePointer,
        _ => throw new FormatException($"--call-graph: '{text}' is not dwarf or fp"),
    };

    public static Option<int> BufferKb()
    {
        var option = new Option<int>("--buffer-kb")
        {
            Description = "per-CPU ring buffer size in KiB",
            DefaultValueFactory = _ => 64 * 1024,
        };
        option.Validators.Add(r =>
        {
            if (r.GetValueOrDefault<int>() is < MinBufferKb or > MaxBufferKb)
                r.AddError($"--buffer-kb must be between {MinBufferKb} and {MaxBufferKb}");
        });
        return option;
    }

    public static Option<AnalysisSelection> Analysis() => new("--analysis")
    {
        Description = "analyses to report, comma-separated: " +
            $"{string.Join(", ", AnalysisNames.All.Where(n => n != "all"))} (default: all)",
        DefaultValueFactory = _ => AnalysisSelection.All,
        CustomParser = r => ParseOrError(r, AnalysisNames.Parse, AnalysisSelection.None),
    };

    public static Option<int?> AnalysisThreads()
    {
        var option = new Option<int?>("--analysis-threads")
        {
            Description = "threads that run the analyzers besides the one reading the trace; 0: all on one thread " +
                $"(default: CPUs - 1, at most {AnalysisPlan.DefaultMaxThreads}; up to {AnalysisPlan.MaxThreads})",
        };
        option.Validators.Add(r =>
        {
            if (r.GetValueOrDefault<int?>() is < 0 or > AnalysisPlan.MaxThreads)
                r.AddError($"--analysis-threads must be between 0 and {AnalysisPlan.MaxThreads}");
        });
        return option;
    }

    /// <summary>--top N: detailed sections for the N top-ranked processes of a report without a target.</summary>
    public static Option<int> Top() => new("--top")
    {
        Description = "without a target process: detailed sections for the N top-ranked processes " +
            $"(default {SystemOverview.DefaultTop}, 0 to {MaxTop})",
        DefaultValueFactory = _ => SystemOverview.DefaultTop,
        CustomParser = r => ParseOrError(r, ParseTop, SystemOverview.DefaultTop),
    };

    private static int ParseTop(string text) =>
        int.TryParse(text, System.Globalization.NumberStyles.AllowLeadingSign,
            System.Globalization.CultureInfo.InvariantCulture, out var n) && n is >= 0 and <= MaxTop
            ? n
            : throw new FormatException($"--top must be between 0 and {MaxTop} (got '{text}')");

    /// <summary>The most detailed process sections --top allows (each is a table in every report file).</summary>
    public const int MaxTop = 100;

    public static Option<TimelineWindow?> TimelineWindow() => new("--timeline-window")
    {
        Description = "report.html's thread timeline: START:LENGTH in ms from the region's begin (default 10:1)",
        CustomParser = r => ParseOrError<TimelineWindow?>(r, text => Analyzers.Timeline.TimelineWindow.Parse(text),
            null),
    };

    public static Option<int> Timeout(string description)
    {
        var option = new Option<int>("--timeout") { Description = description };
        option.Validators.Add(r =>
        {
            if (r.GetValueOrDefault<int>() < 0) r.AddError("--timeout must be 0 or more seconds");
        });
        return option;
    }

    /// <summary>A trace file argument; a path that is not an existing file is refused while parsing.</summary>
    public static Argument<string> ExistingTraceFile(string description)
    {
        var argument = new Argument<string>("trace") { Description = description };
        argument.Validators.Add(r =>
        {
            var path = r.GetValueOrDefault<string>();
            // A path this user cannot reach is left to the command, which fails with exit 1 rather than 2.
            if (!string.IsNullOrEmpty(path) && InputFile.Problem(Path.GetFullPath(path)) is { Usage: true } problem)
                r.AddError(problem.Message);
        });
        return argument;
    }

    /// <summary>
    /// Runs <paramref name="parse"/> on the option's text; its <see cref="ArgumentException"/> or
    /// <see cref="FormatException"/> becomes the parse error (the message names the valid values).
    /// </summary>
    internal static T ParseOrError<T>(ArgumentResult result, Func<string, T> parse, T onError)
    {
        var text = result.Tokens.Count > 0 ? result.Tokens[^1].Value : "";
        try
        {
            return parse(text);
        }
        catch (Exception ex) when (ex is ArgumentException or FormatException)
        {
            result.AddError(ex.Message);
            return onError;
        }
    }
}
