using System.Globalization;

namespace TraceLab.Formats;

/// <summary>
/// One line of /proc/PID/maps: "start-end perms offset dev inode [path]", addresses in hex; the path is empty for an
/// anonymous mapping, a file's path, or a name in brackets ([heap], [stack], [vdso]).
/// </summary>
public static class ProcMapsLine
{
    /// <summary>The line's address range and path; false when it is not such a line.</summary>
    public static bool TryParse(string line, out ulong start, out ulong end, out string path)
    {
        start = end = 0;
        path = "";
        var fields = line.Split(' ', 6, StringSplitOptions.RemoveEmptyEntries);
        if (fields.Length < 5) return false;
        var dash = fields[0].IndexOf('-', StringComparison.Ordinal);
        if (dash <= 0
            || !ulong.TryParse(fields[0].AsSpan(0, dash), NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture,
                out start)
            || !ulong.TryParse(fields[0].AsSpan(dash + 1), NumberStyles.AllowHexSpecifier,
                CultureInfo.InvariantCulture, out end)
            || end <= start)
            return false;
        path = fields.Length == 6 ? fields[5].Trim() : "";
        return true;
    }
}
