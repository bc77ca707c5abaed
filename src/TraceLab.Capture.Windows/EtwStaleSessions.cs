namespace TraceLab.Capture.Windows;

/// <summary>
/// Stops the sessions of TraceLab runs that died (their owner pid no longer exists). Sessions not named by
/// TraceLab, and those of a TraceLab run that is still alive, are never touched.
/// </summary>
public static class EtwStaleSessions
{
    public static StaleSessionCleanup Stop(IEtwSessionController controller, Func<int, bool> processAlive)
    {
        var stopped = new List<string>();
        var failed = new List<string>();
        foreach (var name in controller.ActiveSessionNames())
        {
            var owner = EtwSessionName.OwnerOf(name);
            if (owner is null || processAlive(owner.Value)) continue;
            try
            {
                // false: it ended between listing and stopping; either way it is gone.
                controller.StopSession(name);
                stopped.Add(name);
            }
            catch (Exception ex) when (ex is not OutOfMemoryException)
            {
                failed.Add($"stale ETW session {name} (left by a TraceLab run that died) could not be stopped "
                    + $"({ex.Message}): run 'logman stop {name} -ets' as Administrator");
            }
        }
        return new StaleSessionCleanup(stopped, failed);
    }

    /// <summary>Whether a process with this id exists (a stale session's owner).</summary>
    public static bool ProcessAlive(int pid)
    {
        try
        {
            using var p = System.Diagnostics.Process.GetProcessById(pid);
            return !p.HasExited;
        }
        catch (ArgumentException)
        {
            return false;
        }
        catch (InvalidOperationException)
        {
            return false;
        }
    }
}

/// <param name="Stopped">Stale sessions stopped.</param>
/// <param name="Failed">One line per stale session that could not be stopped, saying how to stop it.</param>
public sealed record StaleSessionCleanup(IReadOnlyList<string> Stopped, IReadOnlyList<string> Failed)
{
    public IEnumerable<string> Notices =>
        Stopped.Select(n => $"stopped stale ETW session {n} left by a TraceLab run that died").Concat(Failed);
}
