using TraceLab.Analyzers;
using TraceLab.Reporting;

namespace TraceLab.Cli.CommandLine;

/// <summary>
/// The analyses `--analysis` accepts, read from the one registration (<see cref="AnalysisReports.All"/>). This is
/// the only CLI file that knows where that list lives.
/// </summary>
internal static class AnalysisNames
{
    /// <summary>Every selectable name, "all" included.</summary>
    public static IEnumerable<string> All => AnalysisReports.Names;

    /// <summary>Parses "threads,kernel,..."; throws <see cref="ArgumentException"/> naming the unknown entry.</summary>
    public static AnalysisSelection Parse(string text) => AnalysisReports.Parse(text);

    public static IEnumerable<string> Format(AnalysisSelection kinds) => AnalysisReports.Format(kinds);
}
