using TraceLab.Formats.TraceDat;

namespace TraceLab.Capture.Linux;

/// <summary>Turns a finished capture into trace-cmd's trace.dat, so trace-cmd report and KernelShark open it.</summary>
public static class RawCaptureTraceDat
{
    public static TraceDatContents ToContents(this RawCapture capture)
    {
        var contents = new TraceDatContents
        {
            HeaderPage = capture.HeaderPage,
            HeaderEvent = capture.HeaderEvent,
            SavedCmdlines = capture.SavedCmdlines,
            TraceClock = capture.Clock,
            Uname = $"Linux {Environment.MachineName} {capture.KernelRelease} {Architecture()}",
        };
        contents.FtraceFormats.Add(capture.PrintFormat);
        foreach (var (name, format) in capture.EventFormats)
            contents.AddEventFormat(name[..name.IndexOf('/', StringComparison.Ordinal)], format);
        contents.CpuStats.AddRange(capture.CpuStats);
        contents.CpuDataFiles.AddRange(capture.CpuDataFiles);
        return contents;
    }

    /// <summary>
    /// Writes trace.dat to <paramref name="path"/> (the raw per-CPU files stay until <see cref="DeleteRawFiles"/>).
    /// </summary>
    public static void WriteTraceDat(this RawCapture capture, string path)
    {
        TraceDatWriter.Write(path, capture.ToContents());
    }

    private static string Architecture() => System.Runtime.InteropServices.RuntimeInformation.OSArchitecture switch
    {
        System.Runtime.InteropServices.Architecture.X64 => "x86_64",
        System.Runtime.InteropServices.Architecture.Arm64 => "aarch64",
        var a => a.ToString().ToLowerInvariant(),
    };

    public static void DeleteRawFiles(this RawCapture capture)
    {
        foreach (var f in capture.CpuDataFiles)
        {
            try { File.Delete(f); }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException) { }
        }
    }
}
