using System.Globalization;

namespace TraceLab.Workloads.Targets;

/// <summary>
/// Running processes traced by `--pid PID[,PID...]`: they are not our children, so their end is seen by polling
/// (pid gone, a zombie, or the pid reused by a process that started later).
/// </summary>
public sealed class AttachedProcesses
{
    private static readonly TimeSpan PollInterval = TimeSpan.FromMilliseconds(100);

    private readonly Dictionary<int, ulong> _started;

    private AttachedProcesses(Dictionary<int, ulong> started) => _started = started;

    public IReadOnlyList<int> Pids => [.. _started.Keys];

    /// <summary>
    /// Parses "PID[,PID...]"; throws <see cref="TargetException"/> (exit 2) for bad text or a missing process.
    /// </summary>
    public static AttachedProcesses Find(string pidList)
    {
        var started = new Dictionary<int, ulong>();
        foreach (var part in pidList.Split(',', StringSplitOptions.TrimEntries))
        {
            if (!int.TryParse(part, NumberStyles.None, CultureInfo.InvariantCulture, out var pid) || pid <= 0)
                throw new TargetException($"--pid {pidList}: '{part}' is not a process id");
            if (started.ContainsKey(pid)) continue;
            started[pid] = StartOf(pid) ?? throw new TargetException($"--pid {pid}: no such process");
        }
        if (started.Count == 0) throw new TargetException("--pid needs at least one process id");
        return new AttachedProcesses(started);
    }

    /// <summary>
    /// Throws <see cref="TargetException"/> (exit 2) when one of them exited while the capture was set up.
    /// </summary>
    public void EnsureStillRunning()
    {
        foreach (var (pid, start) in _started)
            if (!IsRunning(pid, start))
                throw new TargetException($"--pid {pid}: the process exited while the capture was being set up");
    }

    public bool AnyRunning() => _started.Any(kv => IsRunning(kv.Key, kv.Value));

    /// <summary>
    /// Completes when every attached process has exited; cancellation (duration, Ctrl-C) stops the wait.
    /// </summary>
    public async Task WaitAllExitedAsync(CancellationToken cancellationToken)
    {
        while (AnyRunning()) await Task.Delay(PollInterval, cancellationToken).ConfigureAwait(false);
    }

    private static bool IsRunning(int pid, ulong start) =>
        ProcStat.Read(pid) is { } s && !s.IsZombie && s.StartTicks == start;

    private static ulong? StartOf(int pid) => ProcStat.Read(pid) is { IsZombie: false } s ? s.StartTicks : null;
}
