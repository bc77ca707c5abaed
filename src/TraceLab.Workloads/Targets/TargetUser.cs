using System.Globalization;

namespace TraceLab.Workloads.Targets;

/// <summary>A local user a traced program runs as (`--user NAME` under sudo), from /etc/passwd.</summary>
public sealed record TargetUser(string Name, int Uid, string Home)
{
    public static TargetUser Find(string name) => Find(name, "/etc/passwd");

    /// <summary>
    /// Throws <see cref="TargetException"/> (exit 2) when there is no such user or TraceLab cannot switch to it.
    /// </summary>
    public static TargetUser Find(string name, string passwdFile)
    {
        if (OperatingSystem.IsWindows()) throw new TargetException("--user is not supported on Windows");
        if (Environment.UserName != "root" && !string.Equals(Environment.UserName, name, StringComparison.Ordinal))
            throw new TargetException($"--user {name}: only root can run a program as another user (use sudo)");
        foreach (var line in File.ReadLines(passwdFile))
        {
            var f = line.Split(':');
            if (f.Length < 7 || f[0] != name) continue;
            if (!int.TryParse(f[2], NumberStyles.None, CultureInfo.InvariantCulture, out var uid)) break;
            return new TargetUser(name, uid, f[5]);
        }
        throw new TargetException($"--user {name}: no such user");
    }
}
