using TraceLab.Reporting;

namespace TraceLab.Tests.Samples;

/// <summary>
/// Each sample's stored report.md is its stored report.json rendered by today's <see cref="ReportMarkdown"/>, so a
/// deliberate change to report.md's wording shows up here. To regenerate after such a change (the traces and
/// report.json stay as captured):
/// <c>TRACELAB_REWRITE_SAMPLE_MD=1 dotnet test tests/TraceLab.Tests --filter
/// "FullyQualifiedName~SampleMarkdownTests"</c>, then review <c>git diff sample-traces</c>.
/// </summary>
public sealed class SampleMarkdownTests
{
    public static TheoryData<string> Samples => new() { "timemutex-cs", "timemutex-mutex", "perf-timemutex-mutex" };

    [Theory]
    [MemberData(nameof(Samples))]
    public void Stored_report_md_is_the_stored_report_json_rendered(string sample)
    {
        var dir = Path.Combine(RepoPaths.SampleTraces, sample);
        var json = ReportJson.Deserialize(File.ReadAllText(Path.Combine(dir, "report.json")));
        var path = Path.Combine(dir, "report.md");
        var rendered = ReportMarkdown.Render(json);

        if (Environment.GetEnvironmentVariable("TRACELAB_REWRITE_SAMPLE_MD") == "1") File.WriteAllText(path, rendered);

        Assert.Equal(File.ReadAllText(path), rendered);
    }
}
