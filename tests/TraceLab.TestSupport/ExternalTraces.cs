using Xunit;

namespace TraceLab.TestSupport;

/// <summary>
/// Real trace files recorded by other people with other tools, kept beside the repository (never in it) in
/// ../shared/external-traces. Tests that read them skip, with the reason, where the folder or the file is absent.
/// </summary>
public static class ExternalTraces
{
    /// <summary>The folder, whether or not it exists: the repository's parent's shared/external-traces.</summary>
    public static string Folder { get; } =
        Path.GetFullPath(Path.Combine(RepoPaths.Root, "..", "shared", "external-traces"));

    /// <summary>
    /// Full path of a file given relative to the folder (e.g. "tracecmd/hip24_test_guest_v7zlib.dat").
    /// </summary>
    public static string PathOf(string relative) => Path.Combine(Folder, relative);

    /// <summary>Why the file cannot be read here, or null when it exists.</summary>
    public static string? MissingReason(string relative) =>
        File.Exists(PathOf(relative))
            ? null
            : $"external trace {relative} not found under {Folder} (not a package: copy the external-traces " +
              "collection, described in its README.md, to that folder)";
}

/// <summary>
/// A test that reads real external trace files; skipped, with the reason, when any of them is absent.
/// </summary>
public sealed class ExternalTraceFactAttribute : FactAttribute
{
    public ExternalTraceFactAttribute(params string[] files)
    {
        foreach (var f in files)
            if (ExternalTraces.MissingReason(f) is { } reason) { Skip = reason; break; }
    }
}

/// <summary>A theory over real external trace files; skipped, with the reason, when any of them is absent.</summary>
public sealed class ExternalTraceTheoryAttribute : TheoryAttribute
{
    public ExternalTraceTheoryAttribute(params string[] files)
    {
        foreach (var f in files)
            if (ExternalTraces.MissingReason(f) is { } reason) { Skip = reason; break; }
    }
}
