namespace TraceLab.Workloads;

/// <summary>A workload could not be built or run; the message is one line for the user.</summary>
public sealed class WorkloadException : Exception
{
    public WorkloadException(string message) : base(message) { }
    public WorkloadException(string message, Exception inner) : base(message, inner) { }
    public WorkloadException() { }
}
