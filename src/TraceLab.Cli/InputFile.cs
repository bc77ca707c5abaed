namespace TraceLab.Cli;

/// <summary>
/// The check every command makes of a file it is given to read: a path that does not exist is a usage error (exit 2);
/// one this user may not reach (a directory on the way that it cannot search, such as another user's 0700 home) is a
/// failure of the environment (exit 1), said as such rather than as "no such file".
/// </summary>
public static class InputFile
{
    /// <summary>
    /// Why <paramref name="path"/> cannot be used as an input file, or null when it is an existing file.
    /// </summary>
    /// <returns>The one-line reason and whether it is a usage error (exit 2) rather than a failure (exit 1).</returns>
    public static (string Message, bool Usage)? Problem(string path)
    {
        if (File.Exists(path)) return null;
        try
        {
            // stat(2) tells a missing path (ENOENT) from one this user may not look up (EACCES); File.Exists cannot.
            File.GetAttributes(path);
        }
        catch (UnauthorizedAccessException)
        {
            return ($"{path}: permission denied: this user cannot reach it (a directory on its path is not searchable)",
                false);
        }
        catch (IOException)
        {
        }
        return ($"{path}: no such file", true);
    }

    /// <summary>Throws the error <see cref="Problem"/> describes, if any.</summary>
    /// <exception cref="UsageException">The path does not exist or is a directory.</exception>
    /// <exception cref="UnauthorizedAccessException">This user cannot reach the path.</exception>
    public static void Check(string path)
    {
        if (Problem(path) is not { } problem) return;
        if (problem.Usage) throw new UsageException(problem.Message);
        throw new UnauthorizedAccessException(problem.Message);
    }
}
