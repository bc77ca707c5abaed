namespace TraceLab.Tests.Cli;

/// <summary>
/// `tracelab analyze` writes report.json, report.md and report.html side by side (and draws the terminal report
/// meanwhile): a file that cannot be written, on whichever thread, ends the run with one line and exit code 1, and
/// leaves the earlier report in the directory as it was — no new file beside old ones, no temporary file.
/// </summary>
public sealed class ReportFilesFailureTests
{
    private static readonly string Tool = Path.Combine(AppContext.BaseDirectory, "tracelab.dll");
    private static readonly string Sample = Path.Combine(RepoPaths.SampleTraces, "timemutex-mutex", "trace.dat");

    [Theory]
    [InlineData("report.json")]
    [InlineData("report.md")]
    [InlineData("report.html")]
    public void An_unwritable_report_file_is_one_line_and_exit_1_and_the_earlier_report_stays(string unwritable)
    {
        using var dir = new TempDirectory("tracelab-unwritable");
        foreach (var name in new[] { "report.json", "report.md", "report.html" })
            File.WriteAllText(dir.File(name), $"earlier {name}");
        // A directory where the file's temporary copy goes: it cannot be created, even by root.
        Directory.CreateDirectory(dir.File($".{unwritable}.tmp"));

        var (code, _, err) = ProcessOutput.Run("dotnet", [Tool, "analyze", Sample, "--out", dir.Path, "--force"]);

        Assert.Equal(1, code);
        var lines = err.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Single(lines);
        Assert.StartsWith($"tracelab: writing {dir.File(unwritable)} failed: ", lines[0], StringComparison.Ordinal);
        Assert.DoesNotContain("   at ", err, StringComparison.Ordinal);
        Assert.DoesNotContain("AggregateException", err, StringComparison.Ordinal);
        foreach (var name in new[] { "report.json", "report.md", "report.html" })
            Assert.Equal($"earlier {name}", File.ReadAllText(dir.File(name)));
        Assert.Equal([$".{unwritable}.tmp"], Directory.GetFileSystemEntries(dir.Path, ".*").Select(Path.GetFileName));
        Assert.Empty(Directory.GetFiles(dir.Path, "chart-*"));
    }
}
