using TraceLab.Capture.Windows;

namespace TraceLab.Formats.Tests.Etw;

public class EtlTraceReaderTests
{
    /// <summary>Runs only where ETW is missing; on Windows the source would really open the file.</summary>
    public sealed class NotOnWindowsFactAttribute : FactAttribute
    {
        public NotOnWindowsFactAttribute()
        {
            if (TestEnvironment.EtwAvailableReason() is { } reason) Skip = reason;
        }
    }

    [NotOnWindowsFact]
    public void Opening_an_etl_file_off_Windows_says_it_needs_Windows()
    {
        using var dir = new TempDirectory("etl");
        var path = dir.File("capture.etl");
        File.WriteAllBytes(path, new byte[4096]);

        var ex = Assert.Throws<PlatformNotSupportedException>(() => EtlTraceReader.Open(path));

        Assert.Contains(path, ex.Message, StringComparison.Ordinal);
        Assert.Contains("Windows", ex.Message, StringComparison.Ordinal);
    }

    [NotOnWindowsFact]
    public void The_platform_is_checked_before_the_file()
    {
        Assert.Throws<PlatformNotSupportedException>(() => EtlTraceReader.Open("/no/such/dir/capture.etl"));
    }
}
