using System.IO.Pipes;
using TraceLab.Capture.Windows;

namespace TraceLab.Tests.Capture;

/// <summary>
/// The ETW guard with its real loop (<see cref="EtwGuardLoop"/>) on a thread of the test process, reading a real
/// anonymous pipe; only the process boundary is missing. <see cref="Die"/> closes the write end without a word,
/// which is what Windows does to TraceLab's handles when it is killed.
/// </summary>
internal sealed class InProcessEtwGuard : IEtwGuard
{
    private readonly AnonymousPipeServerStream _write = new(PipeDirection.Out);
    private readonly StreamWriter _writer;
    private readonly Thread _loop;
    private readonly StringWriter _log = new();

    public InProcessEtwGuard(int ownerPid, IEtwSessionController controller, List<string>? sent = null)
    {
        Sent = sent ?? [];
        var read = new AnonymousPipeClientStream(PipeDirection.In, _write.ClientSafePipeHandle);
        _writer = new StreamWriter(_write) { AutoFlush = true };
        _loop = new Thread(() =>
        {
            using var reader = new StreamReader(read);
            Stopped = EtwGuardLoop.Run(reader, ownerPid, controller, _log);
        })
        { IsBackground = true };
        _loop.Start();
    }

    /// <summary>Every line sent to the guard, in order ("w NAME", "f NAME").</summary>
    public List<string> Sent { get; }
    public IReadOnlyList<string>? Stopped { get; private set; }
    public bool Disposed { get; private set; }
    public string Log => _log.ToString();

    public void Watch(string sessionName) => Send($"w {sessionName}");
    public void Forget(string sessionName) => Send($"f {sessionName}");

    private void Send(string line)
    {
        Sent.Add(line);
        if (!Disposed) _writer.WriteLine(line);
    }

    /// <summary>TraceLab dies: its end of the pipe closes; the guard's loop ends and acts.</summary>
    public void Die()
    {
        if (!Disposed)
        {
            Disposed = true;
            _write.Dispose();
        }
        if (!_loop.Join(TimeSpan.FromSeconds(10))) throw new TimeoutException("the guard loop did not end");
    }

    public void Dispose() => Die();
}

/// <summary>Records the processes a run put in its kill-on-close job.</summary>
internal sealed class FakeProcessJob : IProcessJob
{
    public List<int> Added { get; } = [];
    public bool Disposed { get; private set; }
    public void Add(int pid) => Added.Add(pid);
    public void Dispose() => Disposed = true;
}
