using System.Globalization;

namespace TraceLab.Workloads.Targets;

/// <summary>One process as /proc/PID/stat shows it: parent, state and start time (clock ticks after boot).</summary>
public readonly record struct ProcStat(int Pid, int ParentPid, char State, ulong StartTicks)
{
    public bool IsZombie => State is 'Z' or 'X';

    /// <summary>
    /// When the process started, on the trace's clock (CLOCK_MONOTONIC, ns): /proc's start time is in clock ticks
    /// of boot time, so it has the tick's resolution (10 ms at USER_HZ 100) and the suspended time is taken off.
    /// </summary>
    public long StartMonotonicNs(long bootToMonotonicNs, long ticksPerSecond) =>
        (long)(StartTicks * (1_000_000_000UL / (ulong)ticksPerSecond)) - bootToMonotonicNs;

    /// <summary>Null when the process does not exist (any more) or its stat cannot be read.</summary>
    public static ProcStat? Read(int pid)
    {
        try
        {
            return Parse(pid, File.ReadAllText($"/proc/{pid.ToString(CultureInfo.InvariantCulture)}/stat"));
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }

    /// <summary>
    /// Parses a stat line; the command name may contain spaces and parentheses, so fields count from the last ')'.
    /// </summary>
    public static ProcStat? Parse(int pid, string line)
    {
        var close = line.LastIndexOf(')');
        if (close < 0 || close + 2 >= line.Length) return null;
        var fields = line[(close + 2)..].Split(' ');
        // After the name: state(3) ppid(4) ... starttime(22), i.e. indexes 0, 1 and 19 here.
        if (fields.Length < 20 || fields[0].Length != 1) return null;
        if (!int.TryParse(fields[1], NumberStyles.None, CultureInfo.InvariantCulture, out var ppid)) return null;
        if (!ulong.TryParse(fields[19], NumberStyles.None, CultureInfo.InvariantCulture, out var start)) return null;
        return new ProcStat(pid, ppid, fields[0][0], start);
    }

    /// <summary>
    /// The child processes of <paramref name="pid"/> (of any of its threads), from /proc/PID/task/TID/children.
    /// </summary>
    public static List<int> Children(int pid)
    {
        var children = new List<int>();
        try
        {
            var tasks = $"/proc/{pid.ToString(CultureInfo.InvariantCulture)}/task";
            foreach (var task in Directory.EnumerateDirectories(tasks))
            {
                string text;
                try { text = File.ReadAllText(Path.Combine(task, "children")); }
                catch (Exception ex) when (ex is IOException or UnauthorizedAccessException) { continue; }
                foreach (var part in text.Split(' ', StringSplitOptions.RemoveEmptyEntries))
                    if (int.TryParse(part, NumberStyles.None, CultureInfo.InvariantCulture, out var child))
                        children.Add(child);
            }
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            // The process is gone.
        }
        return children;
    }

    /// <summary>Every process currently in /proc.</summary>
    public static List<ProcStat> All()
    {
        var list = new List<ProcStat>();
        foreach (var dir in Directory.EnumerateDirectories("/proc"))
        {
            if (!int.TryParse(Path.GetFileName(dir), NumberStyles.None, CultureInfo.InvariantCulture, out var pid))
                continue;
            if (Read(pid) is { } s) list.Add(s);
        }
        return list;
    }
}

/// <summary>Start times of processes on the trace clock, for processes whose fork the trace does not show.</summary>
public static class ProcStarts
{
    /// <summary>(pid, start ns on CLOCK_MONOTONIC) of each process that still exists; empty off Linux.</summary>
    public static List<(int Pid, long StartNs)> Of(IEnumerable<ProcStat> processes)
    {
        if (!OperatingSystem.IsLinux()) return [];
        var offset = ProcNative.BootToMonotonicNs();
        var hz = ProcNative.ClockTicksPerSecond();
        return processes.Select(p => (p.Pid, p.StartMonotonicNs(offset, hz))).ToList();
    }

    public static List<(int Pid, long StartNs)> Of(IEnumerable<int> pids) =>
        Of(pids.Select(ProcStat.Read).Where(s => s is not null).Select(s => s!.Value));
}

/// <summary>The threads of processes, as /proc lists them now.</summary>
public static class ProcThreads
{
    /// <summary>The thread ids of <paramref name="pid"/> (empty when it is gone).</summary>
    public static IReadOnlyList<int> Of(int pid)
    {
        try
        {
            return Directory.EnumerateDirectories($"/proc/{pid.ToString(CultureInfo.InvariantCulture)}/task")
                .Select(d => int.TryParse(Path.GetFileName(d), NumberStyles.None, CultureInfo.InvariantCulture,
                    out var t) ? t : 0)
                .Where(t => t > 0).ToList();
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return [];
        }
    }

    /// <summary>
    /// Every process with more than one thread, with its threads (one-thread processes need no mapping).
    /// </summary>
    public static IEnumerable<(int Pid, IReadOnlyList<int> Tids)> MultiThreaded()
    {
        if (!OperatingSystem.IsLinux()) yield break;
        foreach (var p in ProcStat.All())
        {
            var tids = Of(p.Pid);
            if (tids.Count > 1) yield return (p.Pid, tids);
        }
    }
}
