namespace TraceLab.Formats.Symbols;

/// <summary>Where <see cref="StackSymbolizer"/> looks for symbols besides the binaries themselves.</summary>
public sealed class SymbolOptions
{
    /// <summary>Roots of debug files: ROOT/.build-id/xx/rest.debug and ROOT/DIR/DEBUGLINK.</summary>
    public IReadOnlyList<string> DebugDirectories { get; init; } = ["/usr/lib/debug"];

    /// <summary>Where JIT maps perf-PID.map are looked for.</summary>
    public string PerfMapDirectory { get; init; } = "/tmp";

    /// <summary>
    /// Kernel symbols, asked for once when a stack has kernel frames; null, or a null result: kernel frames are
    /// named [kernel.kallsyms]+offset.
    /// </summary>
    public Func<Kallsyms?>? KernelSymbols { get; init; }

    /// <summary>
    /// The running kernel's symbols when it is the kernel the trace was recorded on (same release): a perf.data
    /// holds no kallsyms, and perf script reads this machine's too.
    /// </summary>
    public static Func<Kallsyms?> RunningKernel(string? traceRelease) => () =>
    {
        try
        {
            var release = File.ReadAllText("/proc/sys/kernel/osrelease").Trim();
            if (traceRelease is null || release != traceRelease.Trim()) return null;
            using var text = new StreamReader("/proc/kallsyms");
            var symbols = Kallsyms.Parse(text);
            return symbols.Count > 0 ? symbols : null;
        }
        catch (IOException)
        {
            return null;
        }
        catch (UnauthorizedAccessException)
        {
            return null;
        }
    };
}
