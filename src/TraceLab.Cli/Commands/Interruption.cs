using System.Runtime.InteropServices;

namespace TraceLab.Cli.Commands;

/// <summary>
/// Turns Ctrl-C and SIGTERM (and, for long unattended runs, SIGHUP: the terminal was closed) into a cancellation,
/// so captures and sweeps stop cleanly instead of dying mid-write.
/// </summary>
public sealed class Interruption : IDisposable
{
    private readonly CancellationTokenSource _cts = new();
    private readonly List<PosixSignalRegistration> _registrations = [];

    /// <param name="hangUp">
    /// Also SIGHUP. Sweeps and `claims --run` last minutes to hours: closing their terminal should keep what was
    /// measured and write the report, as Ctrl-C does, not end the process where it stands.
    /// </param>
    public Interruption(bool hangUp = false)
    {
        _registrations.Add(PosixSignalRegistration.Create(PosixSignal.SIGINT, OnSignal));
        _registrations.Add(PosixSignalRegistration.Create(PosixSignal.SIGTERM, OnSignal));
        // Output to the closed terminal is dropped by HangUpTolerantWriter.
        if (hangUp) _registrations.Add(PosixSignalRegistration.Create(PosixSignal.SIGHUP, OnSignal));
    }

    public CancellationToken Token => _cts.Token;
    public bool Interrupted { get; private set; }

    private void OnSignal(PosixSignalContext context)
    {
        context.Cancel = true;
        Interrupted = true;
        _cts.Cancel();
    }

    public void CancelAfter(TimeSpan timeout) => _cts.CancelAfter(timeout);

    public void Dispose()
    {
        foreach (var r in _registrations) r.Dispose();
        _cts.Dispose();
    }
}
