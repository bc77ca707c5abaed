using System.Runtime.InteropServices;

namespace TraceLab.Sweeps;

/// <summary>The machine a sweep ran on: a claim's verdict is about this hardware and kernel.</summary>
public sealed record MachineInfo(int Cpus, string? CpuModel, string Os, string? Kernel, string Runtime)
{
    public static MachineInfo Current() => new(
        Environment.ProcessorCount,
        ReadCpuModel(),
        RuntimeInformation.OSDescription,
        ReadFirstLine("/proc/sys/kernel/osrelease"),
        RuntimeInformation.FrameworkDescription);

    private static string? ReadCpuModel()
    {
        try
        {
            return File.Exists("/proc/cpuinfo")
                ? File.ReadLines("/proc/cpuinfo")
                    .FirstOrDefault(l => l.StartsWith("model name", StringComparison.Ordinal))?.Split(':', 2)[1].Trim()
                : null;
        }
        catch (IOException) { return null; }
    }

    private static string? ReadFirstLine(string path)
    {
        try { return File.Exists(path) ? File.ReadLines(path).FirstOrDefault()?.Trim() : null; }
        catch (IOException) { return null; }
    }
}
