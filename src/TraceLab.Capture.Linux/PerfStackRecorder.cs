using System.Diagnostics;
using System.Globalization;
using System.Runtime.InteropServices;
using System.Text;
using TraceLab.Core.Capture;

namespace TraceLab.Capture.Linux;

/// <summary>
/// <c>tracelab trace --stacks</c>: <c>perf record</c> beside the tracefs capture, system-wide, recording the switches
/// of threads that block (<c>prev_state &amp; 255</c>: where each wait, lock syscall or other, blocked) and the
/// wakeups (where each was released), each with its registers and an 8 KB copy of the user stack
/// (<c>--call-graph dwarf</c>) that TraceLab unwinds with the binaries' CFI, so stacks are whole on code built without
/// frame pointers (Debian's). Not every lock syscall: a call that neither blocks nor wakes costs no one time, and
/// recording them all multiplied the data (lock_sites: 7,895 stacks against ~270). The trace keeps every
/// event and marker; this file only adds stacks (TraceLab.Formats.StackJoin). Both recordings run on
/// CLOCK_MONOTONIC (tracefs "mono", perf <c>-k mono</c>). perf starts with its events disabled and enables them on a
/// command through its control FIFO, so <see cref="Start"/> returns once it records. It writes compressed when it can
/// (<see cref="Compresses"/>).
/// </summary>
public sealed class PerfStackRecorder : IDisposable
{
    /// <summary>The copy of the user stack per event, perf's default for --call-graph dwarf.</summary>
    public const int StackBytes = 8192;

    /// <summary>
    /// perf's buffer per CPU: on 2 CPUs, 16 MB lost a third of lock_sites' samples (perf's reader starved by the
    /// program's threads) and 64 MB none; on bigger machines less per CPU, at most 1 GB in all.
    /// </summary>
    public static string BufferPerCpu(int cpus) =>
        string.Create(CultureInfo.InvariantCulture, $"{Math.Clamp(1024 / Math.Max(1, cpus), 16, 64)}M");

    /// <summary>
    /// Whether <paramref name="perf"/> was built with zstd (<c>perf version --build-options</c>), so that it can
    /// compress what it writes (<c>-z</c>). Why it matters: the stack copies are ~8 KB an event, and a busy server
    /// makes tens of thousands a second (PostgreSQL under pgbench, 16 backends on 2 CPUs: ~30,000 a second,
    /// ~250 MB/s), more than these VMs' new page cache takes (a first write of 2 GB: 140-380 MB/s); perf's buffers
    /// fill and it drops half the samples or more (a CI run: 112,314 lost against 24,792 kept). Compressed, the same
    /// seconds are ~7 MB (the copies repeat: ratio 43) and none are lost.
    /// </summary>
    public static bool Compresses(string perf)
    {
        try
        {
            var psi = new ProcessStartInfo(perf, ["version", "--build-options"])
            {
                UseShellExecute = false,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
            };
            using var p = Process.Start(psi)!;
            var error = p.StandardError.ReadToEndAsync();
            var text = p.StandardOutput.ReadToEnd();
            if (!p.WaitForExit(10_000))
            {
                p.Kill();
                return false;
            }

            error.Wait();
            return text.Split('\n').Any(l => l.TrimStart().StartsWith("zstd:", StringComparison.Ordinal)
                && l.Contains("[ on", StringComparison.Ordinal));
        }
        catch (Exception e) when (e is System.ComponentModel.Win32Exception or IOException)
        {
            return false;
        }
    }

    private readonly Process _perf;
    private readonly string _fifoDirectory;
    private readonly StringBuilder _log = new();
    private int _control = -1;
    private bool _stopped;

    private PerfStackRecorder(Process perf, string fifoDirectory, string output)
    {
        _perf = perf;
        _fifoDirectory = fifoDirectory;
        Output = output;
    }

    /// <summary>The perf.data being written.</summary>
    public string Output { get; }

    /// <summary>perf's pid (the capture's guard kills it if TraceLab dies).</summary>
    public int Pid => _perf.Id;

    /// <summary>What to say when perf cannot be found (one line for the user).</summary>
    public const string PerfMissing = "--stacks needs perf (apt-get install -y linux-perf)";

    /// <summary>
    /// The perf command line's events and call graph: one --call-graph for all (not per-event terms, with which
    /// perf script does not unwind the copies).
    /// </summary>
    public static IReadOnlyList<string> EventArguments(UserStackWalk walk = UserStackWalk.Dwarf) =>
    [
        "--call-graph", walk == UserStackWalk.FramePointer
            ? "fp"
            : string.Create(CultureInfo.InvariantCulture, $"dwarf,{StackBytes}"),
        // A blocking switch only (its state has a bit below TASK_REPORT_MAX): a preempted thread is not waiting.
        "-e", "sched:sched_switch", "--filter", "prev_state & 255",
        "-e", "sched:sched_waking",
    ];

    /// <summary>
    /// Starts <paramref name="perf"/> (the executable, found by the caller) writing <paramref name="output"/> and
    /// returns once it records.
    /// </summary>
    /// <exception cref="TracingUnavailableException">perf refuses the events or does not start.</exception>
    /// <param name="walk">How user stacks are recorded (<c>--call-graph dwarf</c> or <c>fp</c>).</param>
    public static PerfStackRecorder Start(string perf, string output, TimeSpan ready,
        UserStackWalk walk = UserStackWalk.Dwarf)
    {
        var fifos = Directory.CreateTempSubdirectory("tracelab-perf-").FullName;
        var control = Path.Combine(fifos, "control");
        var ack = Path.Combine(fifos, "ack");
        if (Libc.MakeFifo(control, 0x180) != 0 || Libc.MakeFifo(ack, 0x180) != 0)
        {
            var errno = Marshal.GetLastPInvokeError();
            Directory.Delete(fifos, recursive: true);
            throw new TracingUnavailableException(
                $"--stacks: cannot make perf's control FIFOs: {Libc.ErrorText(errno)}");
        }

        var psi = new ProcessStartInfo(perf)
        {
            UseShellExecute = false,
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        foreach (var a in (string[])["record", "-a", "-k", "mono", "-m", BufferPerCpu(Environment.ProcessorCount),
                     "-D", "-1",
                     "--control", $"fifo:{control},{ack}", "--no-buildid-cache", "-o", output])
            psi.ArgumentList.Add(a);
        if (Compresses(perf)) psi.ArgumentList.Add("-z");
        foreach (var a in EventArguments(walk)) psi.ArgumentList.Add(a);

        Process process;
        try
        {
            process = Process.Start(psi)!;
        }
        catch (Exception e) when (e is System.ComponentModel.Win32Exception or IOException)
        {
            Directory.Delete(fifos, recursive: true);
            throw new TracingUnavailableException($"--stacks: cannot start {perf}: {e.Message}");
        }

        var recorder = new PerfStackRecorder(process, fifos, output);
        try
        {
            recorder.Collect(process);
            recorder.Enable(control, ack, ready);
            return recorder;
        }
        catch
        {
            recorder.Dispose();
            throw;
        }
    }

    private void Collect(Process process)
    {
        process.StandardInput.Close();
        process.OutputDataReceived += (_, e) => Append(e.Data);
        process.ErrorDataReceived += (_, e) => Append(e.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
    }

    private void Append(string? line)
    {
        if (line is null) return;
        lock (_log)
        {
            if (_log.Length < 64 * 1024) _log.AppendLine(line);
        }
    }

    /// <summary>What perf printed (its warnings, its loss and size lines).</summary>
    public IReadOnlyList<string> Log
    {
        get
        {
            lock (_log)
                return _log.ToString().Split('\n',
                    StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        }
    }

    private string LastLine() =>
        Log.LastOrDefault(l => !l.StartsWith("Events disabled", StringComparison.Ordinal)) ?? "no output";

    private unsafe void Enable(string control, string ack, TimeSpan ready)
    {
        // Read-write opens of a FIFO never block (there is a reader and a writer: ourselves), and perf's own
        // write-only open of the ack FIFO then finds its reader.
        _control = Libc.Open(control, Libc.O_RDWR | Libc.O_CLOEXEC);
        var ackFd = Libc.Open(ack, Libc.O_RDWR | Libc.O_CLOEXEC | Libc.O_NONBLOCK);
        try
        {
            if (_control < 0 || ackFd < 0)
                throw new TracingUnavailableException("--stacks: cannot open perf's control FIFOs: "
                    + Libc.ErrorText(Marshal.GetLastPInvokeError()));
            var command = "enable\n"u8;
            fixed (byte* p = command)
                if (Libc.Write(_control, p, command.Length) != command.Length)
                    throw new TracingUnavailableException("--stacks: cannot write to perf's control FIFO");

            var deadline = Stopwatch.StartNew();
            var buffer = stackalloc byte[16];
            while (true)
            {
                if (_perf.HasExited)
                {
                    _perf.WaitForExit();
                    throw new TracingUnavailableException(
                        $"--stacks: perf record exited with code {_perf.ExitCode}: {LastLine()}");
                }

                if (deadline.Elapsed > ready)
                    throw new TracingUnavailableException(
                        $"--stacks: perf record did not start recording within {ready.TotalSeconds:0} s: {LastLine()}");
                var fd = new Libc.PollFd { Fd = ackFd, Events = Libc.POLLIN };
                if (Libc.Poll(&fd, 1, 100) > 0 && Libc.Read(ackFd, buffer, 16) > 0) return;
            }
        }
        finally
        {
            if (ackFd >= 0) Libc.Close(ackFd);
        }
    }

    /// <summary>
    /// Stops perf (SIGINT, as Ctrl-C stops it) and waits for it to write the file; false, with the reason, when it
    /// did not finish in <paramref name="wait"/> (it is killed then) or failed.
    /// </summary>
    public bool Stop(TimeSpan wait, out string? problem)
    {
        problem = null;
        if (_stopped) return true;
        _stopped = true;
        if (!_perf.HasExited) Libc.Kill(_perf.Id, 2);
        if (!_perf.WaitForExit(wait))
        {
            Kill();
            problem = $"perf record did not finish writing {Path.GetFileName(Output)} within {wait.TotalSeconds:0} s";
            return false;
        }

        _perf.WaitForExit();
        if (_perf.ExitCode != 0 && !File.Exists(Output))
        {
            problem = $"perf record exited with code {_perf.ExitCode}: {LastLine()}";
            return false;
        }

        return true;
    }

    private void Kill()
    {
        try
        {
            if (!_perf.HasExited) _perf.Kill();
            _perf.WaitForExit(5000);
        }
        catch (InvalidOperationException)
        {
            // It has exited meanwhile.
        }
    }

    public void Dispose()
    {
        if (!_stopped)
        {
            _stopped = true;
            Kill();
        }

        if (_control >= 0)
        {
            Libc.Close(_control);
            _control = -1;
        }

        try
        {
            Directory.Delete(_fifoDirectory, recursive: true);
        }
        catch (IOException)
        {
            // A temporary directory of two FIFOs; nothing depends on it.
        }

        _perf.Dispose();
    }
}
