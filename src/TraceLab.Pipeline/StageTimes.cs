using System.Diagnostics;
using System.Globalization;
using TraceLab.Core;

namespace TraceLab.Pipeline;

/// <summary>
/// The diagnostic TRACELAB_STAGES=1 (docs/performance.md#stages): one line on stderr per stage of a run — its wall
/// time, and when it ended the wall time since the process started, the process CPU time, the memory allocated and
/// the garbage collections so far (their count per generation, and how long they paused the program) — to see where
/// the time after the pass goes. Off, a stage costs one field read: no clock is read and nothing is printed.
/// </summary>
public static class StageTimes
{
    /// <summary>The environment variable that switches the lines on ("1").</summary>
    public const string Variable = "TRACELAB_STAGES";

    /// <summary>Whether the lines are printed (read once, at start-up).</summary>
    public static bool Enabled { get; } = Environment.GetEnvironmentVariable(Variable) == "1";

    private static readonly object Gate = new();
    private static DateTime _processStart;
    /// <summary>The end of the latest stage: where a <see cref="Mark"/>ed stage and "exit" start.</summary>
    private static DateTime _latestEnd;

    /// <summary>
    /// Prints the first stage, the runtime's start-up up to Main, and prints the last, "exit" (Main's return to the
    /// runtime's exit handlers), when the process ends.
    /// </summary>
    public static void StartOfMain()
    {
        if (!Enabled) return;
        using var self = Process.GetCurrentProcess();
        _processStart = self.StartTime.ToUniversalTime();
        Print("start to Main", DateTime.UtcNow - _processStart, Gen0Budget());
        Ended(DateTime.UtcNow);
        AppDomain.CurrentDomain.ProcessExit += (_, _) => Mark("exit");
    }

    /// <summary>Prints the stage that ends now and began where the latest one ended (command line, exit).</summary>
    public static void Mark(string name)
    {
        if (!Enabled) return;
        DateTime from;
        lock (Gate) from = _latestEnd;
        Print(name, DateTime.UtcNow - from);
        Ended(DateTime.UtcNow);
    }

    /// <summary>
    /// Says (between the stages) that the run's heap is not collected for its first <paramref name="bytes"/> allocated
    /// (docs/performance.md#no-gc-region), or that the runtime refused that (0).
    /// </summary>
    public static void NoGcRegion(long bytes)
    {
        Heap(bytes > 0
            ? string.Create(CultureInfo.InvariantCulture,
                $"heap: no garbage collection for the first {bytes >> 20} MiB allocated")
            : "heap: the runtime refused a region without garbage collection; collections as usual");
    }

    /// <summary>Says how much of the managed heap's address range was given huge pages (0: none), and how much of
    /// that was made writable ahead of the collector; null: 4 KiB pages were chosen. <paramref name="why"/>: what
    /// decided (docs/performance.md#huge-pages-measured).</summary>
    public static void HugePages((long Advised, long Writable)? bytes, string why)
    {
        Heap(bytes switch
        {
            null => $"heap: 4 KiB pages ({why})",
            { Advised: > 0 } b => string.Create(CultureInfo.InvariantCulture,
                $"heap: transparent huge pages advised for {b.Advised >> 20} MiB of the collector's address range, "
                + $"{b.Writable >> 20} MiB of it writable ahead of the collector ({why})"),
            _ => "heap: no huge pages advised (not Linux, the system gives none or gives them always, or refused; "
                + why + ")",
        });
    }

    /// <summary>A line about the run's heap, between the stages.</summary>
    private static void Heap(string line)
    {
        if (!Enabled) return;
        lock (Gate) Console.Error.WriteLine(line);
    }

    /// <summary>Times a stage until the result is disposed (on any thread; stages may overlap).</summary>
    public static Stage Begin(string name) => new(Enabled ? name : null, Enabled ? Stopwatch.GetTimestamp() : 0);

    /// <summary>A stage ended at <paramref name="at"/>: the "exit" stage is timed from the latest such end.</summary>
    private static void Ended(DateTime at)
    {
        lock (Gate) if (at > _latestEnd) _latestEnd = at;
    }

    /// <summary>
    /// "; gen-0 budget N MiB": the smallest gen-0 budget the runtime was given (GCgen0size: the Native AOT build sets
    /// it, docs/performance.md#gen0-budget; DOTNET_GCgen0size, hex, overrides it); empty when none was.
    /// </summary>
    private static string Gen0Budget()
    {
        var hex = Environment.GetEnvironmentVariable("DOTNET_GCgen0size")
            ?? AppContext.GetData("TraceLab.GCgen0size") as string;
        if (hex is null || !long.TryParse(hex.StartsWith("0x", StringComparison.OrdinalIgnoreCase) ? hex[2..] : hex,
                NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out var bytes) || bytes <= 0)
            return "";
        return string.Create(CultureInfo.InvariantCulture, $"; gen-0 budget {bytes / (double)(1 << 20):0.#} MiB");
    }

    private static void Print(string name, TimeSpan wall, string suffix = "")
    {
        // Read and printed under the lock: lines print in the order their counts were read, so they never go down.
        lock (Gate)
        {
            var sinceStart = DateTime.UtcNow - _processStart;
            Console.Error.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"stage {name,-14} {wall.TotalMilliseconds,8:0.0} ms wall; at its end " +
                $"{sinceStart.TotalMilliseconds,8:0.0} ms since start, " +
                $"{CpuClock.Process().TotalMilliseconds,8:0.0} ms CPU; " +
                $"so far {GC.GetTotalAllocatedBytes() / 1e6:0.0} MB allocated, " +
                $"{GC.CollectionCount(0)}/{GC.CollectionCount(1)}/{GC.CollectionCount(2)} garbage " +
                $"collections (gen 0/1/2), paused {GC.GetTotalPauseDuration().TotalMilliseconds:0.0} ms{suffix}"));
        }
    }

    /// <summary>A running stage: printed when disposed (nothing when the diagnostic is off).</summary>
    public readonly struct Stage : IDisposable
    {
        private readonly string? _name;
        private readonly long _start;

        internal Stage(string? name, long start)
        {
            _name = name;
            _start = start;
        }

        public void Dispose()
        {
            if (_name is null) return;
            Print(_name, Stopwatch.GetElapsedTime(_start));
            Ended(DateTime.UtcNow);
        }
    }
}
