using System.Runtime.InteropServices;

namespace TraceLab.Capture.Windows;

/// <summary>
/// Writes string events of one ETW provider (EventRegister, EventWriteString, EventUnregister of advapi32), as the
/// workloads' platform_win32.c writes their markers: the session enables the provider, so each event lands in the
/// trace, where the ETL reader makes it a Marker (src/TraceLab.Formats/Etw/WorkloadMarkers.cs). Windows only.
/// </summary>
public sealed partial class EtwEventWriter : IEtwMarkerWriter
{
    private long _handle;

    /// <summary>Registers <paramref name="provider"/>; throws when ETW refuses.</summary>
    public EtwEventWriter(Guid provider)
    {
        if (!OperatingSystem.IsWindows()) throw new PlatformNotSupportedException("ETW is Windows-only");
        var status = EventRegister(in provider, IntPtr.Zero, IntPtr.Zero, out _handle);
        if (status != 0) throw new InvalidOperationException($"EventRegister failed with error {status}");
    }

    /// <inheritdoc/>
    public bool Write(string text) => _handle != 0 && EventWriteString(_handle, 0, 0, text) == 0;

    /// <inheritdoc/>
    public void Dispose()
    {
        if (_handle == 0) return;
        _ = EventUnregister(_handle);
        _handle = 0;
    }

    [LibraryImport("advapi32.dll")]
    private static partial uint EventRegister(in Guid providerId, IntPtr enableCallback, IntPtr callbackContext,
        out long regHandle);

    [LibraryImport("advapi32.dll", StringMarshalling = StringMarshalling.Utf16)]
    private static partial uint EventWriteString(long regHandle, byte level, ulong keyword, string text);

    [LibraryImport("advapi32.dll")]
    private static partial uint EventUnregister(long regHandle);
}
