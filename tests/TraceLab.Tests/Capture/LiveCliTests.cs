using TraceLab.TestSupport;
using Xunit;

namespace TraceLab.Tests.Capture;

/// <summary>`trace --live` where the backend has no real-time source (tracefs): one line, exit 2, nothing created.</summary>
public sealed class LiveCliTests
{
    [EtwRefusalFact]
    public void Live_on_tracefs_is_refused_before_anything_is_created()
    {
        var tool = Path.Combine(AppContext.BaseDirectory, "tracelab.dll");
        var outDir = Path.Combine(Path.GetTempPath(), "never-" + Guid.NewGuid());
        var (code, _, err) = ProcessOutput.Run("dotnet", tool, "trace", "timemutex", "mutex", "--live", "--out", outDir);
        Assert.Equal(2, code);
        var line = Assert.Single(err.Split('\n', StringSplitOptions.RemoveEmptyEntries));
        Assert.Equal("tracelab: --live needs a real-time event source; the tracefs backend has none (ETW on Windows has): run without --live and read the report", line);
        Assert.False(Directory.Exists(outDir));
    }
}
