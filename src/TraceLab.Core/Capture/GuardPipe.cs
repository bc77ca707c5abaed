using System.Diagnostics;

namespace TraceLab.Core.Capture;

/// <summary>
/// The write end of the pipe to a guard process (the Linux tracefs guard, the Windows ETW guard): one command per
/// line; closing it tells the guard TraceLab is done. A guard killed from outside makes sends silently do nothing —
/// the run goes on, and the guard's job falls back to the next run's stale sweep.
/// </summary>
/// <param name="process">The guard, started with standard input redirected.</param>
/// <param name="exitWait">How long <see cref="Dispose"/> waits for the guard to finish its cleanup.</param>
public sealed class GuardPipe(Process process, TimeSpan exitWait) : IDisposable
{
    private readonly Process _process = process;
    private readonly TimeSpan _exitWait = exitWait;
    private readonly object _gate = new();
    private bool _closed;

    public int Pid => _process.Id;

    public void Send(string line)
    {
        lock (_gate)
        {
            if (_closed) return;
            try { _process.StandardInput.WriteLine(line); }
            catch (IOException)
            {
                // The guard died (killed from outside): nothing to tell it any more.
            }
        }
    }

    /// <summary>Closes the pipe (the guard cleans up whatever is left and exits) and waits briefly for it.</summary>
    public void Dispose()
    {
        lock (_gate)
        {
            if (_closed) return;
            _closed = true;
            try { _process.StandardInput.Close(); }
            catch (IOException) { }
        }
        _process.WaitForExit(_exitWait);
        _process.Dispose();
    }
}
