namespace TraceLab.Workloads.Targets;

/// <summary>
/// The program or processes to trace cannot be used; one line for the user and the exit code it calls for.
/// </summary>
public sealed class TargetException : Exception
{
    /// <summary>Like a shell: the program does not exist or cannot be executed.</summary>
    public const int NotFound = 127;

    /// <summary>A bad --pid or --user: a usage error.</summary>
    public const int BadTarget = 2;

    public TargetException(string message, int exitCode) : base(message) => ExitCode = exitCode;
    public TargetException(string message) : this(message, BadTarget) { }
    public TargetException(string message, Exception inner) : base(message, inner) => ExitCode = BadTarget;
    public TargetException() : this("bad trace target") { }

    public int ExitCode { get; }
}
