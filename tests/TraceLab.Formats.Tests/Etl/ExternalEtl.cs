using System.IO.Compression;

namespace TraceLab.Formats.Tests.Etl;

/// <summary>
/// The real .etl files among the external traces (<see cref="ExternalTraces"/>); the zipped ones are extracted into a
/// temporary folder (deleted on dispose) because a reader needs the file itself.
/// </summary>
internal sealed class ExternalEtl : IDisposable
{
    public const string ShutdownLogger = "etw/etlparser_ShutdownPerfDiagLogger.etl";
    public const string PerfView = "etw/perfview_net452_x64.etl.zip";
    public const string TraceLoggingTester = "etw/etwanalyzer_TraceLoggingTester.etl.zip";

    private readonly string? _dir;

    public ExternalEtl(string relative)
    {
        var source = ExternalTraces.PathOf(relative);
        if (!relative.EndsWith(".zip", StringComparison.Ordinal))
        {
            Path = source;
            return;
        }

        _dir = Directory.CreateTempSubdirectory("tracelab-etl-").FullName;
        using var zip = ZipFile.OpenRead(source);
        var entry = zip.Entries.Single(e => e.Name.EndsWith(".etl", StringComparison.OrdinalIgnoreCase));
        Path = System.IO.Path.Combine(_dir, entry.Name);
        entry.ExtractToFile(Path);
    }

    public string Path { get; }

    public void Dispose()
    {
        if (_dir is not null) Directory.Delete(_dir, recursive: true);
    }
}
