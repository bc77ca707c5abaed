using TraceLab.Reporting;
using Xunit;

namespace TraceLab.Tests.Reporting;

/// <summary>A failed program is said at the top of its report (ProgramExit), in the shell's terms.</summary>
public sealed class ProgramExitTests
{
    private static RunReport Report(int? exitCode, bool partial = false) => new()
    {
        Run = exitCode is { } code
            ? new RunSection { Workload = "sh", Parameters = new() { ["mode"] = "program" }, ExitCode = code }
            : null,
        Capture = new CaptureSection { Backend = "tracefs", TraceFile = "trace.dat", Partial = partial },
        Region = new RegionSection { Source = "target" },
        Threads = [],
    };

    [Theory]
    [InlineData(1, "exit code 1: the program failed; the report covers only what it did until then")]
    [InlineData(2, "exit code 2: the program failed; the report covers only what it did until then")]
    [InlineData(139, "exit code 139 = 128 + 11 (SIGSEGV): a signal ended the program; the report covers only what "
        + "it did until then")]
    [InlineData(134, "exit code 134 = 128 + 6 (SIGABRT): a signal ended the program; the report covers only what "
        + "it did until then")]
    [InlineData(168, "exit code 168 = 128 + 40 (signal 40): a signal ended the program; the report covers only "
        + "what it did until then")]
    [InlineData(200, "exit code 200: the program failed; the report covers only what it did until then")]
    [InlineData(-1, "exit code -1: the program failed; the report covers only what it did until then")]
    public void A_non_zero_exit_is_described_as_the_shell_reports_it(int code, string said)
    {
        Assert.Equal(said, ProgramExit.Describe(Report(code)));
        var markdown = ReportMarkdown.Render(Report(code));
        // In the list under the title, before the first section.
        Assert.Contains("- **Failed:** " + said, markdown[..markdown.IndexOf("\n## ", StringComparison.Ordinal)],
            StringComparison.Ordinal);
    }

    [Fact]
    public void Success_an_interruption_and_a_trace_without_a_run_say_nothing()
    {
        Assert.Null(ProgramExit.Describe(Report(0)));
        // Interrupted: the code is TraceLab's (130) or the program's, not known which; PARTIAL already says it.
        Assert.Null(ProgramExit.Describe(Report(130, partial: true)));
        Assert.Null(ProgramExit.Describe(Report(null)));
        Assert.DoesNotContain("Failed", ReportMarkdown.Render(Report(0)), StringComparison.Ordinal);
    }
}
