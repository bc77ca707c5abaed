using TraceLab.Capture.Linux;

namespace TraceLab.Tests.Capture;

/// <summary>
/// <c>--stacks</c> asks perf to compress (<c>-z</c>) only when <c>perf version --build-options</c> says it was built
/// with zstd: a perf without it refuses the option, and the capture would fail. Checked on small scripts standing in
/// for perf, each printing what a perf build prints.
/// </summary>
public sealed class PerfCompressionTests
{
    [LinuxFact]
    [System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
    public void Perf_compresses_only_when_its_build_options_say_zstd_is_on()
    {
        using var dir = new TempDirectory("tracelab-fake-perf");
        Assert.True(PerfStackRecorder.Compresses(
            FakePerf(dir.Path, "on", "                  zstd: [ on  ]  # HAVE_ZSTD_SUPPORT")));
        Assert.False(PerfStackRecorder.Compresses(
            FakePerf(dir.Path, "off", "                  zstd: [ OFF ]  # HAVE_ZSTD_SUPPORT")));
        Assert.False(PerfStackRecorder.Compresses(
            FakePerf(dir.Path, "old", "               libnuma: [ on  ]  # HAVE_LIBNUMA_SUPPORT")));
        Assert.False(PerfStackRecorder.Compresses(Path.Combine(dir.Path, "missing")));
    }

    [System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
    private static string FakePerf(string dir, string name, string line)
    {
        var path = Path.Combine(dir, name);
        File.WriteAllText(path, $"#!/bin/sh\n[ \"$1 $2\" = \"version --build-options\" ] || exit 1\n" +
            $"echo 'perf version 6.1'\necho '{line}'\n");
        File.SetUnixFileMode(path, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        return path;
    }
}
