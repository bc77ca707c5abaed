using TraceLab.Core.Capture;

namespace TraceLab.Capture.Windows;

/// <summary>
/// A stopped ETW session's .etl. Committing merges it (image identities for WPA on another machine) when
/// KernelTraceControl.dll is available, else keeps the file as recorded and says so.
/// </summary>
public sealed class EtwCapturedTrace : ICapturedTrace
{
    private readonly string _etl;
    private readonly Action<string, string> _merge;
    private readonly List<string> _notes = [];

    public EtwCapturedTrace(string etlPath, int eventsLost, Action<string, string> merge)
    {
        _etl = etlPath;
        _merge = merge;
        EventsLost = eventsLost;
        if (eventsLost > 0)
            _notes.Add($"the ETW session lost {eventsLost:N0} events (buffers full): metrics may be affected; raise "
                + $"--buffer-kb or use --syscalls none");
    }

    /// <summary>EventsLost the session reported when it stopped (the .etl header carries the same count).</summary>
    public int EventsLost { get; }

    public IReadOnlyList<string> Notes => _notes;

    public void WriteTo(string path)
    {
        try
        {
            _merge(_etl, path);
            return;
        }
        catch (Exception ex) when (ex is DllNotFoundException or PlatformNotSupportedException or IOException
                                       or System.Runtime.InteropServices.COMException or ApplicationException)
        {
            EtwCaptureSession.TryDelete(path);
            _notes.Add($"trace.etl is not merged ({ex.Message}): WPA on another machine may not resolve symbols");
        }
        File.Copy(_etl, path, overwrite: true);
    }

    public void Discard() => EtwCaptureSession.TryDelete(_etl);
}
