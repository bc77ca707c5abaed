namespace TraceLab.Sweeps;

/// <summary>
/// A sweep cannot start or resume (bad definition, missing or corrupt state); the message is one line for the user.
/// </summary>
public sealed class SweepException : Exception
{
    public SweepException(string message) : base(message) { }
    public SweepException(string message, Exception inner) : base(message, inner) { }
    public SweepException() { }
}
