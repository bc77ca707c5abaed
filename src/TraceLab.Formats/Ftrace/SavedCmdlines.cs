using System.Globalization;
using TraceLab.Core;

namespace TraceLab.Formats.Ftrace;

/// <summary>
/// The kernel's saved_cmdlines text ("PID COMM" per line), which trace-cmd stores in trace.dat and perf in
/// perf.data's tracing-data section: the names of the threads the trace saw, as the kernel last knew them.
/// </summary>
public static class SavedCmdlines
{
    /// <summary>Names every thread listed in <paramref name="text"/> in <paramref name="threads"/>.</summary>
    public static void LoadInto(string text, ThreadTable threads)
    {
        foreach (var line in text.Split('\n'))
        {
            var space = line.IndexOf(' ', StringComparison.Ordinal);
            if (space <= 0) continue;
            if (int.TryParse(line.AsSpan(0, space), NumberStyles.Integer, CultureInfo.InvariantCulture, out var pid)
                && pid > 0)
                threads.SetName(pid, line[(space + 1)..].TrimEnd('\r'));
        }
    }
}
