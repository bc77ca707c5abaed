using TraceLab.Analyzers.Timeline;
using TraceLab.Charts;
using TraceLab.Tests.Html;

namespace TraceLab.Tests.Charts;

/// <summary>
/// chart-*.svg does not depend on what else the process drew, or on which thread drew first: the drawing library
/// numbers clip paths from one process-wide counter, and report files are written on several threads.
/// </summary>
public sealed class SvgClipIdsTests
{
    [ChartsFact]
    public void The_same_chart_drawn_again_gives_the_same_svg_bytes()
    {
        var (report, _) = HtmlReportTests.Analyze(TimelineWindow.Default);
        var first = ReportChartImages.Render(report.Charts);
        // Drawn in between, the library's counter moves on: without renumbering the second SVGs would differ.
        ReportChartImages.Render(report.Charts);
        var again = ReportChartImages.Render(report.Charts);

        Assert.Equal(first.Select(i => i.Svg), again.Select(i => i.Svg));
        Assert.All(first, i => Assert.Contains("id=\"cl_0\"", i.Svg, StringComparison.Ordinal));
    }

    [Fact]
    public void Ids_are_numbered_from_zero_in_order_of_appearance_and_every_reference_follows_its_definition()
    {
        const string svg = "<clipPath id=\"cl_1a\"/><g clip-path=\"url(#cl_1a)\"/><clipPath id=\"cl_7\"/>" +
            "<g clip-path=\"url(#cl_7)\"><text>cl_1a stays text</text></g>";

        Assert.Equal("<clipPath id=\"cl_0\"/><g clip-path=\"url(#cl_0)\"/><clipPath id=\"cl_1\"/>" +
            "<g clip-path=\"url(#cl_1)\"><text>cl_1a stays text</text></g>", SvgClipIds.Renumber(svg));
    }
}
