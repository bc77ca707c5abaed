using System.Globalization;
using System.Text;

namespace TraceLab.Workloads.Targets;

/// <summary>A process's initial environment, as /proc/PID/environ shows it (what it was started with).</summary>
public static class ProcEnvironment
{
    /// <summary>
    /// True when <paramref name="pid"/> was started with <paramref name="variable"/>=<paramref name="value"/>. False
    /// when it was not, when it is gone or a zombie (the file is then empty), or when the file cannot be read (another
    /// user's process and TraceLab not root).
    /// </summary>
    public static bool Has(int pid, string variable, string value)
    {
        byte[] environ;
        try
        {
            environ = File.ReadAllBytes($"/proc/{pid.ToString(CultureInfo.InvariantCulture)}/environ");
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return false;
        }
        return Contains(environ, variable, value);
    }

    /// <summary>True when the NUL-separated <paramref name="environ"/> holds the entry <c>variable=value</c>.</summary>
    public static bool Contains(ReadOnlySpan<byte> environ, string variable, string value)
    {
        var entry = Encoding.UTF8.GetBytes(variable + "=" + value);
        while (!environ.IsEmpty)
        {
            var end = environ.IndexOf((byte)0);
            var current = end < 0 ? environ : environ[..end];
            if (current.SequenceEqual(entry)) return true;
            environ = end < 0 ? [] : environ[(end + 1)..];
        }
        return false;
    }
}
