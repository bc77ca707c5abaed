using System.Diagnostics;
using System.Globalization;
using System.Text;
using TraceLab.Capture.Linux;
using TraceLab.Cli.Commands;

namespace TraceLab.IntegrationTests;

/// <summary>The top-level tracefs settings a TraceLab run must leave exactly as it found them.</summary>
public sealed record GlobalTracingState(
    string TracingOn, string CurrentTracer, string TraceClock, string SetEvent, string BufferSizeKb)
{
    public static GlobalTracingState Read()
    {
        var root = Tracefs.Locate();
        string R(string name) => File.ReadAllText(Path.Combine(root, name)).Trim();
        return new GlobalTracingState(
            R("tracing_on"), R("current_tracer"), R("trace_clock"), R("set_event"), R("buffer_size_kb"));
    }
}

/// <summary>tracefs instances, as the tests look at them.</summary>
public static class Instances
{
    public static string Directory => Path.Combine(Tracefs.Locate(), "instances");

    public static string PathOf(string name) => Path.Combine(Directory, name);

    public static List<string> Names() =>
        System.IO.Directory.GetDirectories(Directory).Select(d => Path.GetFileName(d)!).ToList();

    /// <summary>TraceLab instances whose name says one of these processes owns them.</summary>
    public static List<string> OwnedBy(params int[] pids) =>
        Names().Where(n => TracefsInstance.OwnerOf(n) is { } owner && pids.Contains(owner)).ToList();

    /// <summary>Removes a directory the test itself made under instances/ (the kernel frees its buffers).</summary>
    public static void RemoveTestInstance(string name)
    {
        for (var attempt = 0; attempt < 50 && System.IO.Directory.Exists(PathOf(name)); attempt++)
        {
            try { System.IO.Directory.Delete(PathOf(name)); }
            catch (IOException) { Thread.Sleep(20); }
        }
    }
}

/// <summary>Linux processes by pid, through /proc (tests only).</summary>
public static class Processes
{
    /// <summary>
    /// False once the process is gone or a zombie (killed but not yet reaped: it runs nothing any more).
    /// </summary>
    public static bool IsAlive(int pid)
    {
        try
        {
            var stat = File.ReadAllText($"/proc/{pid}/stat");
            return stat[(stat.LastIndexOf(')') + 2)..][0] != 'Z';
        }
        catch (IOException)
        {
            return false;
        }
    }

    public static List<int> ChildrenOf(int parent) => Where(dir =>
    {
        var stat = File.ReadAllText(Path.Combine(dir, "stat"));
        return int.Parse(stat[(stat.LastIndexOf(')') + 2)..].Split(' ')[1], CultureInfo.InvariantCulture) == parent;
    });

    /// <summary>
    /// Live processes whose command line mentions <paramref name="text"/> (e.g. a run's output directory).
    /// </summary>
    public static List<int> WithCommandLineContaining(string text) => Where(dir =>
        File.ReadAllText(Path.Combine(dir, "cmdline")).Contains(text, StringComparison.Ordinal)
            && IsAlive(int.Parse(Path.GetFileName(dir), CultureInfo.InvariantCulture)));

    private static List<int> Where(Func<string, bool> test)
    {
        var found = new List<int>();
        foreach (var dir in System.IO.Directory.EnumerateDirectories("/proc"))
        {
            if (!int.TryParse(Path.GetFileName(dir), NumberStyles.None, CultureInfo.InvariantCulture, out var pid))
                continue;
            try
            {
                if (test(dir)) found.Add(pid);
            }
            catch (IOException) { }
        }
        return found;
    }

    public static string Comm(int pid)
    {
        try { return File.ReadAllText($"/proc/{pid}/comm").Trim(); }
        catch (IOException) { return ""; }
    }

    public static void Kill(int pid)
    {
        try
        {
            using var p = Process.GetProcessById(pid);
            p.Kill();
        }
        catch (ArgumentException) { }
        catch (InvalidOperationException) { }
    }

    public static void WaitUntilGone(int pid, TimeSpan timeout)
    {
        var deadline = Stopwatch.StartNew();
        while (IsAlive(pid) && deadline.Elapsed < timeout) Thread.Sleep(20);
    }

    /// <summary>
    /// Polls until <paramref name="condition"/> holds; fails the test with <paramref name="what"/> when it never does.
    /// </summary>
    public static T WaitFor<T>(Func<T?> condition, TimeSpan timeout, string what) where T : class
    {
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed < timeout)
        {
            if (condition() is { } value) return value;
            Thread.Sleep(20);
        }
        Assert.Fail($"timed out after {timeout.TotalSeconds:0} s waiting for {what}");
        return null!;
    }
}

/// <summary>
/// `tracelab ...` as a child process (the built CLI), for what only a real process shows: exit code, stderr, SIGKILL.
/// </summary>
public sealed class TraceLabProcess : IDisposable
{
    private readonly Process _process;
    private readonly StringBuilder _stdout = new();
    private readonly StringBuilder _stderr = new();

    private TraceLabProcess(Process process)
    {
        _process = process;
        _process.OutputDataReceived += (_, e) => { if (e.Data is not null) lock (_stdout) _stdout.AppendLine(e.Data); };
        _process.ErrorDataReceived += (_, e) => { if (e.Data is not null) lock (_stderr) _stderr.AppendLine(e.Data); };
        _process.BeginOutputReadLine();
        _process.BeginErrorReadLine();
    }

    public int Pid => _process.Id;
    public bool HasExited => _process.HasExited;
    public int ExitCode => _process.ExitCode;
    public string Stdout { get { lock (_stdout) return _stdout.ToString(); } }
    public string Stderr { get { lock (_stderr) return _stderr.ToString(); } }

    public static TraceLabProcess Start(params string[] args)
    {
        // The CLI assembly this test project references is copied here with its runtimeconfig: the build under test.
        var dll = typeof(TraceCommand).Assembly.Location;
        var psi = new ProcessStartInfo(
            Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") is { Length: > 0 } host ? host : "dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
            WorkingDirectory = RepoPaths.Root,
        };
        psi.ArgumentList.Add(dll);
        foreach (var a in args) psi.ArgumentList.Add(a);
        return new TraceLabProcess(Process.Start(psi)!);
    }

    /// <summary>Runs to completion (failing the test if it takes longer than <paramref name="timeout"/>).</summary>
    public static TraceLabProcess Run(TimeSpan timeout, params string[] args)
    {
        var p = Start(args);
        p.WaitForExit(timeout);
        return p;
    }

    public void WaitForExit(TimeSpan timeout)
    {
        if (!_process.WaitForExit(timeout))
        {
            KillTree();
            Assert.Fail($"tracelab did not finish within {timeout.TotalSeconds:0} s; stderr: {Stderr}");
        }
        _process.WaitForExit();
    }

    /// <summary>
    /// The one line a failed run must print: stderr, asserted to be exactly one "tracelab: ..." line.
    /// </summary>
    public string SingleErrorLine()
    {
        var lines = Stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        var line = Assert.Single(lines);
        Assert.StartsWith("tracelab: ", line, StringComparison.Ordinal);
        return line;
    }

    /// <summary>SIGKILL, as `kill -9` would: no handler runs, nothing is cleaned up.</summary>
    public void SigKill()
    {
        _process.Kill(entireProcessTree: false);
        _process.WaitForExit();
    }

    private void KillTree()
    {
        try { _process.Kill(entireProcessTree: true); }
        catch (InvalidOperationException) { }
    }

    public void Dispose()
    {
        if (!_process.HasExited) KillTree();
        _process.Dispose();
    }
}
