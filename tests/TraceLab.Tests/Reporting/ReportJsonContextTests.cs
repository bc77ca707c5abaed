using System.Text.Json;
using System.Text.Json.Serialization;
using TraceLab.Analyzers;
using TraceLab.Core;
using TraceLab.Reporting;
using TraceLab.Reporting.Findings;
using TraceLab.Reporting.Tables;
using TraceLab.Sweeps;

namespace TraceLab.Tests.Reporting;

/// <summary>
/// report.json and the sweep files go through generated metadata only (Native AOT, no reflection warm-up):
/// every registered section has its metadata in <see cref="ReportJsonContext"/>, a section type left out of it fails
/// when its analysis is registered, and the contexts keep the options the files were always written with.
/// </summary>
public sealed class ReportJsonContextTests
{
    [Fact]
    public void Reflection_based_serialization_is_off_so_a_missing_type_fails_here_as_under_native_aot()
    {
        Assert.False(JsonSerializer.IsReflectionEnabledByDefault);
        Assert.Throws<InvalidOperationException>(() => JsonSerializer.Serialize(new NotInAnyContext()));
    }

    [Fact]
    public void Every_registered_section_type_has_its_metadata_in_the_report_context()
    {
        var sections = AnalysisReports.All.Where(a => a.JsonName is not null).ToList();
        Assert.NotEmpty(sections);
        Assert.All(sections, a =>
        {
            Assert.NotNull(a.SectionJson);
            Assert.Equal(a.SectionType, a.SectionJson.Type);
            Assert.Same(ReportJsonContext.Default.Options, a.SectionJson.Options);
        });
        Assert.All(AnalysisReports.All.Where(a => a.JsonName is null), a => Assert.Null(a.SectionJson));
    }

    [Fact]
    public void An_analysis_whose_section_is_not_in_the_context_fails_when_its_metadata_is_asked_naming_the_line()
    {
        // Asked when report.json is written or read, and by the test above for every registration: not when the
        // registration is made, which every command does for its help (IAnalysisReport's SectionJson).
        var unlisted = new UnlistedReport();
        var e = Assert.Throws<InvalidOperationException>(() => unlisted.SectionJson);
        Assert.Contains("[JsonSerializable(typeof(NotInAnyContext))]", e.Message, StringComparison.Ordinal);
        Assert.Contains("ReportJsonContext.cs", e.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Report_and_sweep_contexts_keep_the_options_the_files_were_written_with()
    {
        Assert.All([ReportJsonContext.Default.Options, SweepJsonContext.Default.Options], o =>
        {
            Assert.Same(JsonNamingPolicy.CamelCase, o.PropertyNamingPolicy);
            Assert.True(o.WriteIndented);
            Assert.Equal(JsonIgnoreCondition.WhenWritingNull, o.DefaultIgnoreCondition);
            Assert.Null(o.Encoder);
        });
        // No converter in the options: one there turns off the generated fast-path writers of the whole context.
        // Findings' windows name theirs on the property, and are written as "START:LENGTH" text as they always were.
        Assert.Empty(ReportJsonContext.Default.Options.Converters);
        Assert.Empty(SweepJsonContext.Default.Options.Converters);
    }

    public sealed class NotInAnyContext
    {
        public int Value { get; init; }
    }

    // An existing definition: making one takes a selection bit for the whole test run.
    private sealed class UnlistedReport()
        : AnalysisReport<NoAnalyzer, NotInAnyContext>(Analyses.Smp, "unlisted")
    {
        protected override NotInAnyContext Build(NoAnalyzer analyzer, ReportContext context) => new();
        protected override IReadOnlyList<ReportBlock> View(NotInAnyContext section) => [];
    }

    private sealed class NoAnalyzer : IKernelAnalyzer
    {
        public void OnEvent(in KernelEvent e) { }
        public void OnRegionBegin() { }
        public void Complete(long end) { }
    }
}
