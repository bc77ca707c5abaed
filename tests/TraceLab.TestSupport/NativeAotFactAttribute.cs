using System.Runtime.InteropServices;
using Xunit;

namespace TraceLab.TestSupport;

/// <summary>
/// A test of the Native AOT build (the linux-x64 tool package, built as the linux-x64-aot publish profile builds it):
/// skipped, with the reason, where it cannot be built here (not Linux x64, no linker, no zlib, the ILCompiler package
/// not restored, an SDK older than 10).
/// </summary>
public sealed class NativeAotFactAttribute : FactAttribute
{
    public NativeAotFactAttribute()
    {
        if (NativeAotToolchain.Reason.Value is { } reason) Skip = reason;
    }
}

/// <summary>A theory over the Native AOT build and the external traces named (skipped if one is absent).</summary>
public sealed class NativeAotTheoryAttribute : TheoryAttribute
{
    public NativeAotTheoryAttribute(params string[] externalTraces)
    {
        var reason = NativeAotToolchain.Reason.Value;
        reason ??= externalTraces.Select(ExternalTraces.MissingReason).FirstOrDefault(r => r is not null);
        if (reason is not null) Skip = reason;
    }
}

/// <summary>What the Native AOT build needs, checked once per test run without building anything.</summary>
public static class NativeAotToolchain
{
    /// <summary>The publish profile the tests build, as a user does.</summary>
    public const string Profile = "linux-x64-aot";

    /// <summary>Why the Native AOT build cannot be made here, or null.</summary>
    public static readonly Lazy<string?> Reason = new(Probe);

    // The .NET 8 Native AOT runtime links libz (-lz): the development symlink or the static library.
    private static readonly string[] Zlib =
    [
        "/usr/lib/x86_64-linux-gnu/libz.so", "/usr/lib/x86_64-linux-gnu/libz.a", "/usr/lib64/libz.so",
        "/usr/lib/libz.so",
    ];

    private static string? Probe()
    {
        if (!OperatingSystem.IsLinux() || RuntimeInformation.OSArchitecture != Architecture.X64)
            return $"the {Profile} publish profile builds on Linux x64 only";
        if (!TestEnvironment.OnPath("gcc"))
            return "gcc not installed (apt-get install -y build-essential): the Native AOT build links with it";
        if (!Zlib.Any(File.Exists))
            return "zlib1g-dev not installed (apt-get install -y zlib1g-dev): the Native AOT runtime links libz";
        var packages = Environment.GetEnvironmentVariable("NUGET_PACKAGES") is { Length: > 0 } p
            ? p
            : Path.Combine(Environment.GetFolderPath(Environment.SpecialFolder.UserProfile), ".nuget", "packages");
        var ilc = Path.Combine(packages, "runtime.linux-x64.microsoft.dotnet.ilcompiler");
        if (!Directory.Exists(ilc) || !Directory.EnumerateDirectories(ilc, "8.*").Any())
            return $"the .NET 8 ILCompiler package is not in {packages}: `dotnet restore src/TraceLab.Cli " +
                   $"-p:PublishProfile={Profile}` fetches it (.ci/run does)";
        var sdk = SdkMajor();
        return sdk >= 10
            ? null
            : $"the .NET SDK here is {sdk}.x: the Native AOT tool package (a package per platform) needs SDK 10+";
    }

    // The SDK that builds the repository (global.json rolls forward to the newest installed), not the test's runtime.
    private static int SdkMajor()
    {
        var (code, version, _) = ProcessOutput.Run("dotnet", "--version");
        return code == 0 && int.TryParse(version.Split('.')[0], out var major) ? major : 0;
    }
}
