using System.Runtime.InteropServices;
using TraceLab.Core;

namespace TraceLab.Formats.Etw;

/// <summary>
/// The Win32 workloads write their region markers with EventWriteString on provider "TraceLab-Workload"
/// (native-workloads/platform/platform_win32.c); the payload is the text as NUL-terminated UTF-16.
/// </summary>
public static class WorkloadMarkers
{
    /// <summary>{6b1e5b9a-3f0e-4c55-9a2e-7d1f0c3a5e11}, as registered by platform_win32.c.</summary>
    public static readonly Guid ProviderGuid = new("6b1e5b9a-3f0e-4c55-9a2e-7d1f0c3a5e11");

    /// <summary>A marker event (allocates its text: markers are a handful per run).</summary>
    public static KernelEvent ToEvent(long timestamp, int cpu, int threadId, ReadOnlySpan<byte> payload) =>
        KernelEvent.Marker(timestamp, cpu, threadId, Text(payload));

    public static string Text(ReadOnlySpan<byte> payload)
    {
        var chars = MemoryMarshal.Cast<byte, char>(payload[..(payload.Length & ~1)]);
        var end = chars.IndexOf('\0');
        return new string(end >= 0 ? chars[..end] : chars);
    }
}
