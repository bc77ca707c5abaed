namespace TraceLab.Formats.Tests.TraceDatV7;

/// <summary>
/// A test that converts traces with `trace-cmd convert` and reads them back with `trace-cmd report`; skipped, with the
/// reason, where trace-cmd is missing or was built without zstd (`trace-cmd list -c`). Needs no kernel tracing.
/// </summary>
public sealed class TraceCmdConvertFactAttribute : FactAttribute
{
    private static readonly Lazy<string?> Reason = new(Find);

    /// <param name="externalTraces">External traces the test reads too (skipped, with the reason, when absent).</param>
    public TraceCmdConvertFactAttribute(params string[] externalTraces)
    {
        if (Reason.Value is { } reason) Skip = reason;
        else if (externalTraces.Select(ExternalTraces.MissingReason).FirstOrDefault(r => r is not null) is { } missing)
            Skip = missing;
    }

    private static string? Find()
    {
        if (!OperatingSystem.IsLinux() || !TestEnvironment.OnPath("trace-cmd"))
            return "trace-cmd not installed (apt-get install -y trace-cmd)";
        var (_, stdout, stderr) = ProcessOutput.Run("trace-cmd", "list", "-c");
        return (stdout + stderr).Contains("zstd", StringComparison.Ordinal)
            ? null
            : "this trace-cmd cannot write zstd (`trace-cmd list -c` does not list it): install a trace-cmd built " +
              "with libzstd (Debian 12's: apt-get install -y trace-cmd)";
    }
}
