using System.CommandLine;
using Spectre.Console;
using TraceLab.Analyzers;
using TraceLab.Capture.Linux;
using TraceLab.Cli.Commands;
using TraceLab.Core.Capture;
using TraceLab.Export;
using TraceLab.Export.Perfetto;
using TraceLab.Reporting;

namespace TraceLab.Tests.Cli;

/// <summary>
/// The commands' typed options, parsed in-process: values arrive typed, bad values are parse errors naming what is
/// valid (from the registries, not from text kept in the CLI), so they never reach a command.
/// </summary>
public sealed class CommandOptionsTests
{
    private static readonly string Sample = Path.Combine(RepoPaths.SampleTraces, "timemutex-cs", "trace.dat");
    private static readonly IAnsiConsole Quiet = AnsiConsole.Create(new AnsiConsoleSettings
    {
        Out = new AnsiConsoleOutput(TextWriter.Null),
        Interactive = InteractionSupport.No,
    });

    private static ParseResult Analyze(params string[] args) => AnalyzeCommand.Create(Quiet).Parse([Sample, .. args]);

    private static string SingleError(ParseResult result) => Assert.Single(result.Errors).Message;

    [Fact]
    public void Analysis_names_parse_to_the_selection_and_unknown_ones_list_the_valid_names()
    {
        Assert.Equal(AnalysisSelection.Convoys | AnalysisSelection.Smp,
            Analyze("--analysis", "convoys,smp").GetValue<AnalysisSelection>("--analysis"));
        Assert.Equal(AnalysisSelection.All, Analyze().GetValue<AnalysisSelection>("--analysis"));
        var error = SingleError(Analyze("--analysis", "bogus"));
        Assert.Contains("unknown analysis 'bogus'", error);
        foreach (var name in AnalysisReports.Names) Assert.Contains(name, error);
    }

    [Fact]
    public void The_analysis_help_lists_every_analysis_name()
    {
        var option = AnalyzeCommand.Create(Quiet).Options.Single(o => o.Name == "--analysis");
        foreach (var name in AnalysisReports.Names.Where(n => n != "all")) Assert.Contains(name, option.Description);
    }

    [Theory]
    [InlineData("--analysis-threads", "-1", "--analysis-threads must be between 0 and")]
    [InlineData("--pid", "0", "--pid must be a positive process id")]
    [InlineData("--timeline-window", "10", "START:LENGTH")]
    public void Out_of_range_shared_options_are_parse_errors(string option, string value, string expected) =>
        Assert.Contains(expected, SingleError(Analyze(option, value)));

    [Fact]
    public void A_missing_trace_file_is_a_parse_error()
    {
        var result = AnalyzeCommand.Create(Quiet).Parse(["/nonexistent/trace.dat"]);
        Assert.Equal("/nonexistent/trace.dat: no such file", SingleError(result));
    }

    [Fact]
    public void Export_to_is_typed_from_the_exporter_registry()
    {
        var command = ExportCommand.Create(Quiet);
        var exporter = command.Parse([Sample, "--to", "Perfetto"]).GetValue<ITraceExporter>("--to");
        Assert.IsType<PerfettoTraceExporter>(exporter);
        var error = SingleError(command.Parse([Sample, "--to", "chrome"]));
        var valid = string.Join(", ", TraceExporters.Names);
        Assert.Equal($"unknown export format 'chrome': valid formats are {valid}", error);
    }

    [Theory]
    [InlineData("--buffer-kb", "63", "--buffer-kb must be between 64 and 4194304")]
    [InlineData("--timeout", "-1", "--timeout must be 0 or more seconds")]
    [InlineData("--syscalls", "some", "unknown syscall set 'some'")]
    [InlineData("--call-graph", "lbr", "--call-graph: 'lbr' is not dwarf or fp")]
    public void Trace_options_are_validated_while_parsing(string option, string value, string expected) =>
        Assert.Contains(expected, SingleError(TraceCommand.Create(Quiet).Parse(["timemutex", "cs", option, value])));

    [Fact]
    public void Call_graph_chooses_the_user_stack_walk_and_implies_stacks()
    {
        var command = TraceCommand.Create(Quiet);
        Assert.Equal(UserStackWalk.FramePointer,
            command.Parse(["timemutex", "cs", "--call-graph", "fp"]).GetValue<UserStackWalk?>("--call-graph"));
        Assert.Equal(UserStackWalk.Dwarf,
            command.Parse(["timemutex", "cs", "--call-graph", "dwarf"]).GetValue<UserStackWalk?>("--call-graph"));
        Assert.Null(command.Parse(["timemutex", "cs", "--stacks"]).GetValue<UserStackWalk?>("--call-graph"));
    }

    [Fact]
    public void Trace_options_arrive_typed_with_their_defaults()
    {
        var result = TraceCommand.Create(Quiet).Parse(["timemutex", "cs", "--syscalls", "all", "--threads", "3"]);
        Assert.Empty(result.Errors);
        Assert.Equal(SyscallSet.All, result.GetValue<SyscallSet>("--syscalls"));
        Assert.Equal(64 * 1024, result.GetValue<int>("--buffer-kb"));
        Assert.Equal("3", result.GetValue<string?>("--threads"));
    }

    [Fact]
    public void Overhead_syscall_sets_parse_as_a_list()
    {
        var result = OverheadCommand.Create(Quiet).Parse(["timemutex", "cs", "--syscalls", "lock,none,lock"]);
        Assert.Equal([SyscallSet.Lock, SyscallSet.None], result.GetValue<IReadOnlyList<SyscallSet>>("--syscalls"));
    }
}
