using TraceLab.Analyzers;

namespace TraceLab.Cli.CommandLine;

/// <summary>
/// The analyses `--analysis` accepts, read from the analyzers' own list. This is the only CLI file that knows where
/// that list lives, so moving to another analysis registry changes the two members below and nothing else.
/// </summary>
internal static class AnalysisNames
{
    /// <summary>Every selectable name, "all" included.</summary>
    public static IEnumerable<string> All => AnalysisKinds.Names.Keys;

    /// <summary>Parses "threads,kernel,..."; throws <see cref="ArgumentException"/> naming the unknown entry.</summary>
    public static AnalysisKind Parse(string text) => AnalysisKinds.Parse(text);

    public static IEnumerable<string> Format(AnalysisKind kinds) => AnalysisKinds.Format(kinds);
}
