namespace TraceLab.Formats.StackJoin;

/// <summary>Where the stack recording of a trace lies: beside it, named after it.</summary>
public static class StackFile
{
    /// <summary>The suffix that replaces the trace's extension ("trace.dat" → "trace.stacks.perf.data").</summary>
    public const string Extension = ".stacks.perf.data";

    /// <summary>The stack recording of <paramref name="tracePath"/>.</summary>
    public static string PathFor(string tracePath) => Path.ChangeExtension(tracePath, Extension);
}
