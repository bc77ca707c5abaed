using System.ComponentModel;
using System.Diagnostics;
using System.Globalization;

namespace TraceLab.Workloads.Targets;

/// <summary>
/// A user's program started under capture (`tracelab trace -- PROGRAM ARGS`): the capture is already recording when
/// it is started, so its fork and exec are in the trace and its pid is known from the start. Its stdin, stdout and
/// stderr are TraceLab's own (the terminal). It learns the marker file from <see cref="MarkerVariable"/>.
/// TraceLab dying never kills it (like perf): it is only no longer traced.
/// </summary>
public sealed class TargetProgram : IDisposable
{
    /// <summary>
    /// Environment variable holding the trace_marker path a program writes TRACELAB_REGION_BEGIN/END to.
    /// </summary>
    public const string MarkerVariable = "TRACELAB_TRACE_MARKER";

    /// <summary>
    /// Environment variable marking the program's tree (a value unique to this run): an orphan of the tree that
    /// re-parents to TraceLab is told from TraceLab's other children by it (<see cref="ProcessTree"/>).
    /// </summary>
    public const string TreeVariable = "TRACELAB_PROGRAM_TREE";

    /// <summary>How often /proc is looked at for the tree's new processes and threads.</summary>
    public static readonly TimeSpan PollInterval = TimeSpan.FromMilliseconds(50);

    private readonly Process _process;
    private readonly ProcessTree? _tree;
    private readonly long _startedAt;
    private readonly ChildrenUsage? _childrenBefore;

    private TargetProgram(Process process, string commandLine, string treeMark, long startedAt,
        ChildrenUsage? childrenBefore)
    {
        _process = process;
        _startedAt = startedAt;
        _childrenBefore = childrenBefore;
        CommandLine = commandLine;
        // Orphaned grandchildren come back to us instead of init: "its children" stay countable (Linux only).
        _tree = OperatingSystem.IsLinux()
            ? new ProcessTree(process.Id, Environment.ProcessId,
                pid => ProcEnvironment.Has(pid, TreeVariable, treeMark))
            : null;
    }

    public int Pid => _process.Id;

    /// <summary>
    /// Once <see cref="WaitForTreeAsync"/> has returned: the wall time from the start to the end of the tree's last
    /// process, and the getrusage figures of the program and every process of its tree (what this process, the
    /// subreaper of the tree, and they in turn waited for); null while it runs or when the wait was interrupted.
    /// </summary>
    public ProgramUsage? Usage { get; private set; }
    public string CommandLine { get; }
    public bool HasExited => _process.HasExited;
    /// <summary>The program's exit code once it has exited (128 + signal when a signal ended it).</summary>
    public int ExitCode => _process.ExitCode;

    /// <summary>Pids of every process of the program's tree seen while it ran (the program's own included).</summary>
    public IReadOnlyCollection<int> TreePids => _tree?.Seen ?? [_process.Id];

    /// <summary>
    /// The executable <paramref name="program"/> names, as a shell finds it: a path when it has a '/', else the first
    /// executable file of that name on PATH. Throws <see cref="TargetException"/> (exit 127) otherwise.
    /// </summary>
    public static string Resolve(string program)
    {
        if (program.Length == 0) throw new TargetException("no program given after --", TargetException.NotFound);
        if (program.Contains('/', StringComparison.Ordinal))
        {
            var full = Path.GetFullPath(program);
            if (!File.Exists(full))
                throw new TargetException($"{program}: no such file", TargetException.NotFound);
            if (!IsExecutable(full))
                throw new TargetException($"{program}: not executable (permission denied)", TargetException.NotFound);
            return full;
        }
        var sawNonExecutable = false;
        foreach (var dir in (Environment.GetEnvironmentVariable("PATH") ?? "").Split(Path.PathSeparator))
        {
            if (dir.Length == 0) continue;
            var candidate = Path.Combine(dir, program);
            if (!File.Exists(candidate)) continue;
            if (IsExecutable(candidate)) return candidate;
            sawNonExecutable = true;
        }
        throw new TargetException(sawNonExecutable
            ? $"{program}: not executable (permission denied)"
            : $"{program}: command not found (not a path, and not on PATH)", TargetException.NotFound);
    }

    private static bool IsExecutable(string path)
    {
        if (OperatingSystem.IsWindows()) return true;
        var mode = File.GetUnixFileMode(path);
        return (mode & (UnixFileMode.UserExecute | UnixFileMode.GroupExecute | UnixFileMode.OtherExecute)) != 0;
    }

    /// <param name="executable">From <see cref="Resolve"/>.</param>
    /// <param name="markerPath">Exported in <see cref="MarkerVariable"/>; null when the backend has no marker
    /// file.</param>
    /// <param name="user">Run as this user (TraceLab must be root); null: as TraceLab runs.</param>
    public static TargetProgram Start(string executable, IReadOnlyList<string> arguments, string? markerPath,
        TargetUser? user)
    {
        var psi = new ProcessStartInfo(executable) { UseShellExecute = false };
        foreach (var a in arguments) psi.ArgumentList.Add(a);
        if (markerPath is not null) psi.Environment[MarkerVariable] = markerPath;
        var treeMark = string.Create(CultureInfo.InvariantCulture,
            $"{Environment.ProcessId}-{Random.Shared.NextInt64():x16}");
        psi.Environment[TreeVariable] = treeMark;
        if (user is not null)
        {
            psi.UserName = user.Name;
            psi.Environment["HOME"] = user.Home;
            psi.Environment["USER"] = user.Name;
            psi.Environment["LOGNAME"] = user.Name;
        }
        if (OperatingSystem.IsLinux()) ProcNative.BecomeSubreaper();
        // Children this process waited for before the program count in getrusage too: the program's are the change.
        var childrenBefore = ProcNative.WaitedChildrenUsage();
        var startedAt = Stopwatch.GetTimestamp();
        try
        {
            var p = Process.Start(psi)
                ?? throw new TargetException($"cannot start {executable}", TargetException.NotFound);
            return new TargetProgram(p, string.Join(' ', [executable, .. arguments]), treeMark, startedAt,
                childrenBefore);
        }
        catch (Win32Exception ex)
        {
            throw new TargetException($"{executable}: {ex.Message}", TargetException.NotFound);
        }
    }

    /// <summary>
    /// Waits until the program and every process of its tree have exited; returns the program's exit code (128 + the
    /// signal number when a signal ended it). Cancellation stops the wait without touching the program.
    /// </summary>
    /// <param name="onThreads">Told each process of the tree and its threads as they are first seen (polled every
    /// <see cref="PollInterval"/>), so the trace can say which process a thread belongs to.</param>
    public async Task<int> WaitForTreeAsync(CancellationToken cancellationToken,
        Action<int, IReadOnlyList<int>>? onThreads = null)
    {
        var told = new HashSet<int>();
        var exited = _process.WaitForExitAsync(cancellationToken);
        while (!exited.IsCompleted)
        {
            Report(onThreads, told);
            await Task.WhenAny(exited, Task.Delay(PollInterval, cancellationToken)).ConfigureAwait(false);
        }
        await exited.ConfigureAwait(false);
        // The program's end is exact (its exit is waited for); an orphan outliving it ends within a poll.
        var endedAt = Stopwatch.GetTimestamp();
        while (_tree is not null && _tree.Scan() > 0)
        {
            Report(onThreads, told);
            await Task.Delay(PollInterval, cancellationToken).ConfigureAwait(false);
            endedAt = Stopwatch.GetTimestamp();
        }
        var rusage = ProcNative.WaitedChildrenUsage() - _childrenBefore;
        Usage = new ProgramUsage((long)Stopwatch.GetElapsedTime(_startedAt, endedAt).TotalNanoseconds,
            rusage is { } u
                ? new ProcessTimes
                {
                    UserNs = u.UserNs,
                    SystemNs = u.SystemNs,
                    VoluntarySwitches = u.VoluntarySwitches,
                    InvoluntarySwitches = u.InvoluntarySwitches,
                }
                : null);
        return _process.ExitCode;
    }

    private void Report(Action<int, IReadOnlyList<int>>? onThreads, HashSet<int> told)
    {
        if (_tree is null || onThreads is null) return;
        _tree.Scan();
        foreach (var pid in _tree.Seen.ToList())
        {
            var fresh = ProcThreads.Of(pid).Where(told.Add).ToList();
            if (fresh.Count > 0) onThreads(pid, fresh);
        }
    }

    /// <summary>
    /// Looks for new processes of the tree (call it while the program runs so short-lived parents are seen).
    /// </summary>
    public void ScanTree() => _tree?.Scan();

    public void Dispose() => _process.Dispose();
}

/// <param name="ElapsedNs">Wall time from the program's start to the end of its tree's last process.</param>
/// <param name="Rusage">getrusage(RUSAGE_CHILDREN) over the run: the program and its tree; null off Linux.</param>
public sealed record ProgramUsage(long ElapsedNs, ProcessTimes? Rusage);
