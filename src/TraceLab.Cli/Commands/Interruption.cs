using System.Runtime.InteropServices;

namespace TraceLab.Cli.Commands;

/// <summary>Turns Ctrl-C and SIGTERM into a cancellation, so captures stop cleanly instead of dying mid-write.</summary>
public sealed class Interruption : IDisposable
{
    private readonly CancellationTokenSource _cts = new();
    private readonly PosixSignalRegistration _sigint;
    private readonly PosixSignalRegistration _sigterm;

    public Interruption()
    {
        _sigint = PosixSignalRegistration.Create(PosixSignal.SIGINT, OnSignal);
        _sigterm = PosixSignalRegistration.Create(PosixSignal.SIGTERM, OnSignal);
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
        _sigint.Dispose();
        _sigterm.Dispose();
        _cts.Dispose();
    }
}
