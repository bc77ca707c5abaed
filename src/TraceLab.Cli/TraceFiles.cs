using TraceLab.Core;
using TraceLab.Formats.Registry;

namespace TraceLab.Cli;

/// <summary>Opens a trace file with the reader its content calls for, from the trace format registry.</summary>
public static class TraceFiles
{
    /// <summary>The registry every command opens traces through: trace.dat, perf.data and .etl on every OS.</summary>
    public static TraceFormatRegistry Formats { get; } = TraceFormats.All;

    /// <param name="salvage">
    /// Read up to the first damage instead of failing (<see cref="TraceReadOptions.Salvage"/>).
    /// </param>
    public static IKernelTraceReader Open(string path, bool salvage = false) =>
        Open(path, new TraceReadOptions { Salvage = salvage });

    /// <param name="options">Salvage and, for trace.dat, the buffer (instance) to read.</param>
    public static IKernelTraceReader Open(string path, TraceReadOptions options)
    {
        InputFile.Check(path);
        return Formats.Open(path, options);
    }
}
