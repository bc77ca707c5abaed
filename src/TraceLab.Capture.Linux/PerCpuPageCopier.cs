using System.Runtime.InteropServices;

namespace TraceLab.Capture.Linux;

/// <summary>
/// Copies one CPU's raw ring-buffer pages (per_cpu/cpuN/trace_pipe_raw) to a file while the workload runs, without
/// parsing them: the capture hot path is read page → write page. A dedicated thread polls with a short timeout so a
/// stop request is noticed promptly; after tracing is switched off, <see cref="StopAndDrain"/> reads what is left.
/// </summary>
internal sealed class PerCpuPageCopier : IDisposable
{
    private const int PollTimeoutMs = 50;

    private readonly int _cpu;
    private readonly string _pipePath;
    private readonly int _pageSize;
    private readonly FileStream _output;
    private readonly byte[] _page;
    private readonly Thread _thread;
    private readonly Action _onFailure;
    private volatile bool _stop;
    private int _fd = -1;
    private volatile Exception? _failure;

    /// <param name="onFailure">Called on the copy thread when copying fails (e.g. the disk is full), so the run can
    /// stop early.</param>
    public PerCpuPageCopier(int cpu, string pipePath, string outputPath, int pageSize, Action onFailure)
    {
        _onFailure = onFailure;
        _cpu = cpu;
        _pipePath = pipePath;
        _pageSize = pageSize;
        OutputPath = outputPath;
        _page = new byte[pageSize];
        // Create, not CreateNew: a file of this name is a leftover of a TraceLab run that was killed (--force re-run).
        _output = new FileStream(outputPath, FileMode.Create, FileAccess.Write, FileShare.Read, 1 << 20);
        _fd = Libc.Open(pipePath, Libc.O_RDONLY | Libc.O_NONBLOCK | Libc.O_CLOEXEC);
        if (_fd < 0)
        {
            var errno = Marshal.GetLastPInvokeError();
            _output.Dispose();
            File.Delete(outputPath);
            throw new TracingUnavailableException($"cannot open {pipePath}: {Libc.ErrorText(errno)}");
        }
        _thread = new Thread(Run) { IsBackground = true, Name = $"tracelab-copy-cpu{cpu}" };
    }

    public string OutputPath { get; }
    public long PagesCopied { get; private set; }
    public long BytesCopied { get; private set; }

    public void Start() => _thread.Start();

    /// <summary>Why copying stopped early, or null while it works.</summary>
    public IOException? Failure => _failure is null ? null : Describe(_failure);

    private IOException Describe(Exception failure) =>
        new($"writing the raw trace of cpu{_cpu} failed: {failure.Message}", failure);

    /// <summary>Call after tracing_on=0: stops the thread, then copies every page still in the buffer.</summary>
    public void StopAndDrain()
    {
        _stop = true;
        _thread.Join();
        if (_failure is null)
        {
            try
            {
                CopyAvailable(draining: true);
                // The last megabyte is still in the FileStream's buffer: a full disk often shows up only here.
                _output.Flush(flushToDisk: false);
            }
            catch (Exception ex) { _failure = ex; }
        }
        if (_failure is not null) throw Describe(_failure);
    }

    private unsafe void Run()
    {
        try
        {
            var pfd = new Libc.PollFd { Fd = _fd, Events = Libc.POLLIN };
            while (!_stop)
            {
                pfd.Revents = 0;
                var r = Libc.Poll(&pfd, 1, PollTimeoutMs);
                if (r < 0 && Marshal.GetLastPInvokeError() != Libc.EINTR)
                    throw new IOException($"poll({_pipePath}): {Libc.ErrorText(Marshal.GetLastPInvokeError())}");
                CopyAvailable(draining: false);
            }
        }
        catch (Exception ex)
        {
            _failure = ex;
            _onFailure();
        }
    }

    /// <summary>
    /// Reads pages until the kernel says the buffer is empty (EAGAIN). Each read returns at most one page. While
    /// capturing, a short read (the page the kernel is still writing) ends the round: reading on would hand back
    /// pages holding little more than the events of these very reads (with --syscalls all, the read syscalls
    /// themselves), a feedback loop that once filled trace.dat with nine events per page.
    /// </summary>
    private unsafe void CopyAvailable(bool draining)
    {
        var page = _page;
        fixed (byte* p = page)
        {
            while (true)
            {
                var n = Libc.Read(_fd, p, _pageSize);
                if (n < 0)
                {
                    var errno = Marshal.GetLastPInvokeError();
                    if (errno == Libc.EAGAIN) return;
                    if (errno == Libc.EINTR) continue;
                    throw new IOException($"read({_pipePath}): {Libc.ErrorText(errno)}");
                }
                if (n == 0) return;
                // A short read is a partial page; store whole pages so the file stays page-aligned as trace.dat
                // expects.
                if (n < _pageSize) page.AsSpan((int)n).Clear();
                _output.Write(page, 0, _pageSize);
                PagesCopied++;
                BytesCopied += _pageSize;
                if (n < _pageSize && !draining) return;
            }
        }
    }

    public void Dispose()
    {
        _stop = true;
        if (_thread.IsAlive) _thread.Join();
        if (_fd >= 0)
        {
            Libc.Close(_fd);
            _fd = -1;
        }
        // Disposing flushes the buffer; after a write error that fails again, and the error was already reported.
        try { _output.Dispose(); }
        catch (IOException) { }
    }
}
