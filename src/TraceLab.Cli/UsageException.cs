namespace TraceLab.Cli;

/// <summary>The user asked for something that does not exist (workload, scenario, option value): exit code 2.</summary>
public sealed class UsageException : Exception
{
    public UsageException(string message) : base(message) { }
    public UsageException(string message, Exception inner) : base(message, inner) { }
    public UsageException() { }
}
