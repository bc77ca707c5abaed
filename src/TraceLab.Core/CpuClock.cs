using System.Diagnostics;
using System.Runtime.InteropServices;

namespace TraceLab.Core;

/// <summary>
/// CPU time to the nanosecond: <c>clock_gettime</c>'s process and thread CPU clocks on Linux,
/// <see cref="Process.TotalProcessorTime"/> (and wall time for a thread) elsewhere. Why not the former everywhere: on
/// Linux .NET reads it from /proc/self/stat, which counts in USER_HZ ticks (10 ms), 6 ns per event on a 1.7 M-event
/// trace, as large as the differences a benchmark is looking for.
/// </summary>
public static partial class CpuClock
{
    private const int ProcessCpuTimeClock = 2; // CLOCK_PROCESS_CPUTIME_ID
    private const int ThreadCpuTimeClock = 3; // CLOCK_THREAD_CPUTIME_ID

    /// <summary>This process's CPU time so far (user + system, all threads).</summary>
    public static TimeSpan Process()
    {
        if (OperatingSystem.IsLinux() && ClockGetTime(ProcessCpuTimeClock, out var ts) == 0) return ts.Time;
        using var self = System.Diagnostics.Process.GetCurrentProcess();
        return self.TotalProcessorTime;
    }

    /// <summary>The calling thread's CPU time so far on Linux; elsewhere wall time (a timestamp to subtract).</summary>
    public static TimeSpan CurrentThread() =>
        OperatingSystem.IsLinux() && ClockGetTime(ThreadCpuTimeClock, out var ts) == 0
            ? ts.Time
            : Stopwatch.GetElapsedTime(0);

    [StructLayout(LayoutKind.Sequential)]
    private struct TimeSpec
    {
        public long Seconds;
        public long Nanoseconds;

        public readonly TimeSpan Time => TimeSpan.FromTicks((Seconds * TimeSpan.TicksPerSecond) + (Nanoseconds / 100));
    }

    [LibraryImport("libc", EntryPoint = "clock_gettime")]
    private static partial int ClockGetTime(int clock, out TimeSpec ts);
}
