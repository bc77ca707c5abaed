using System.Runtime.Versioning;

namespace TraceLab.Capture.Windows;

/// <summary>
/// TraceEvent compiles everywhere but its ETW sources call advapi32 (OpenTrace/ProcessTrace): on other systems they
/// die with DllNotFoundException deep inside. This is the one place that says so clearly, before TraceEvent is touched.
/// </summary>
internal static class EtwPlatform
{
    [SupportedOSPlatformGuard("windows")]
    public static bool IsSupported => OperatingSystem.IsWindows();

    public static PlatformNotSupportedException NotSupported(string path) => new(
        $"{path}: .etl files can only be read on Windows (ETW's OpenTrace/ProcessTrace in advapi32); "
        + "capture on Linux with tracefs (trace.dat), or analyze the .etl on a Windows machine.");
}
