using System.Globalization;

namespace TraceLab.Capture.Windows;

/// <summary>
/// The guard side of <see cref="EtwSessionGuard"/>: reads "w NAME" (watch: stop this session if TraceLab dies) and
/// "f NAME" (forget: the run stopped it itself) from a pipe whose only write end TraceLab holds. End of input means
/// TraceLab is gone — however it ended, TerminateProcess included, the kernel closes its handles — and every session
/// still watched is stopped. Only sessions named for the guard's owner (<see cref="EtwSessionName"/>) are ever
/// watched: a guard cannot stop another run's session, nor one TraceLab did not name.
/// </summary>
public static class EtwGuardLoop
{
    /// <summary>The hidden `tracelab` subcommand that runs the guard: <c>tracelab __etw-guard OWNER_PID</c>.</summary>
    public const string Subcommand = "__etw-guard";

    public const string WatchCommand = "w";
    public const string ForgetCommand = "f";

    /// <summary>Runs until end of input, then stops what is still watched; returns the sessions it stopped.</summary>
    /// <param name="log">One line per decision (ignored line, stopped, not running, failed): for diagnosis
    /// only.</param>
    public static IReadOnlyList<string> Run(TextReader commands, int ownerPid, IEtwSessionController controller,
        TextWriter log)
    {
        var watched = new List<string>();
        foreach (var line in Lines(commands))
        {
            var space = line.IndexOf(' ', StringComparison.Ordinal);
            var (verb, name) = space < 0 ? (line, "") : (line[..space], line[(space + 1)..].Trim());
            if (verb == WatchCommand && EtwSessionName.OwnerOf(name) == ownerPid)
            {
                if (!watched.Contains(name, StringComparer.Ordinal)) watched.Add(name);
            }
            else if (verb == ForgetCommand)
            {
                watched.Remove(name);
            }
            else
            {
                log.WriteLine($"tracelab guard: ignored '{line}' (not a session of TraceLab process {ownerPid})");
            }
        }
        return StopAll(watched, controller, log);
    }

    /// <summary>The parent's death shows as end of input; a broken pipe read error means the same.</summary>
    private static IEnumerable<string> Lines(TextReader commands)
    {
        while (true)
        {
            string? line;
            try { line = commands.ReadLine(); }
            catch (IOException) { yield break; }
            if (line is null) yield break;
            if (line.Length > 0) yield return line;
        }
    }

    private static List<string> StopAll(List<string> watched, IEtwSessionController controller, TextWriter log)
    {
        var stopped = new List<string>();
        foreach (var name in watched)
        {
            try
            {
                if (controller.StopSession(name))
                {
                    stopped.Add(name);
                    log.WriteLine($"tracelab guard: stopped ETW session {name} (TraceLab ended without stopping it)");
                }
                else
                {
                    log.WriteLine($"tracelab guard: ETW session {name} was not running");
                }
            }
            catch (Exception ex) when (ex is not OutOfMemoryException)
            {
                var why =
                    ex.GetBaseException() is var inner && inner != ex ? $"{ex.Message}: {inner.Message}" : ex.Message;
                log.WriteLine($"tracelab guard: could not stop ETW session {name} ({why}); " +
                    $"run 'logman stop {name} -ets' as Administrator");
            }
        }
        return stopped;
    }

    /// <summary>The guard's arguments after <see cref="Subcommand"/>: the owner pid; null when malformed.</summary>
    public static int? ParseOwner(IReadOnlyList<string> arguments) =>
        arguments.Count == 1 && int.TryParse(arguments[0], NumberStyles.None, CultureInfo.InvariantCulture, out var pid)
            && pid > 0 ? pid : null;
}
