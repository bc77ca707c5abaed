namespace TraceLab.Formats.Symbols;

/// <summary>Where <see cref="StackSymbolizer"/> looks for symbols besides the binaries themselves.</summary>
public sealed class SymbolOptions
{
    /// <summary>Roots of debug files: ROOT/.build-id/xx/rest.debug and ROOT/DIR/DEBUGLINK.</summary>
    public IReadOnlyList<string> DebugDirectories { get; init; } = ["/usr/lib/debug"];

    /// <summary>
    /// C++ names demangled as perf script prints them, functions without their parameters
    /// (<c>ObjectMonitor::EnterI</c>); false keeps them as the ELF file spells them
    /// (<c>_ZN13ObjectMonitor6EnterIEP10JavaThread</c>, perf script --no-demangle).
    /// </summary>
    public bool Demangle { get; init; } = true;

    /// <summary>Where JIT maps perf-PID.map are looked for.</summary>
    public string PerfMapDirectory { get; init; } = "/tmp";

    /// <summary>
    /// Kernel symbols, asked for once when a stack has kernel frames; null, or a null result: kernel frames are
    /// named [kernel.kallsyms]+offset.
    /// </summary>
    public Func<Kallsyms?>? KernelSymbols { get; init; }

    /// <summary>
    /// perf's build-id cache roots, where perf record copies the vDSO it saw (ROOT/[vdso]/BUILD-ID/vdso).
    /// </summary>
    public IReadOnlyList<string> BuildIdCaches { get; init; } = VdsoImage.DefaultCacheRoots();

    /// <summary>The running kernel's vDSO image (null: none), for a recorded [vdso] with its build-id.</summary>
    public Func<byte[]?> RunningVdso { get; init; } = VdsoImage.Running;

    /// <summary>
    /// The trace was recorded on the kernel running now (same release): its [vdso], recorded without a build-id
    /// (a /proc/PID/maps line), is the running kernel's.
    /// </summary>
    public bool RecordedOnRunningKernel { get; init; }

    /// <summary>True when <paramref name="traceRelease"/> is the release of the kernel running now.</summary>
    public static bool IsRunningKernel(string? traceRelease)
    {
        try
        {
            return traceRelease is not null
                && File.ReadAllText("/proc/sys/kernel/osrelease").Trim() == traceRelease.Trim();
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return false;
        }
    }

    /// <summary>
    /// The running kernel's symbols when it is the kernel the trace was recorded on (same release): a perf.data
    /// holds no kallsyms, and perf script reads this machine's too.
    /// </summary>
    public static Func<Kallsyms?> RunningKernel(string? traceRelease) => () =>
    {
        try
        {
            if (!IsRunningKernel(traceRelease)) return null;
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
