namespace TraceLab.Sweeps;

/// <summary>
/// A sweep cannot start or resume (bad definition, missing or corrupt state); the message is one line for the user:
/// line breaks inside it (a damaged file's text quoted by the JSON reader) become spaces.
/// </summary>
public sealed class SweepException : Exception
{
    /// <summary>An error whose message is <paramref name="message"/> on one line.</summary>
    public SweepException(string message) : base(OneLine(message)) { }

    /// <summary>An error caused by <paramref name="inner"/>, with <paramref name="message"/> on one line.</summary>
    public SweepException(string message, Exception inner) : base(OneLine(message), inner) { }

    /// <summary>An error without a message of its own.</summary>
    public SweepException() { }

    /// <summary>The text with each run of line breaks and the spaces around it replaced by one space.</summary>
    public static string OneLine(string text) =>
        string.Join(' ',
            text.Split(['\r', '\n'], StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries));
}
