using Microsoft.Diagnostics.Tracing.Parsers;
using TraceLab.Core.Capture;

namespace TraceLab.Capture.Windows;

/// <summary>
/// The kernel keywords (EVENT_TRACE_FLAG_*) a capture enables, chosen like the tracefs backend's event set:
/// scheduler events always, syscalls on request (ETW cannot filter them by call, so Lock records all of them),
/// sampled stacks on request.
/// </summary>
public static class EtwKernelKeywords
{
    /// <summary>
    /// Process and Thread give process/thread start, end and rundown (names, thread → process); ContextSwitch gives
    /// CSwitch; Dispatcher gives ReadyThread (who readied whom); ImageLoad lets WPA resolve symbols.
    /// </summary>
    public const KernelTraceEventParser.Keywords Scheduler =
        KernelTraceEventParser.Keywords.Process
        | KernelTraceEventParser.Keywords.Thread
        | KernelTraceEventParser.Keywords.ImageLoad
        | KernelTraceEventParser.Keywords.ContextSwitch
        | KernelTraceEventParser.Keywords.Dispatcher;

    /// <summary>What the real-time view needs: switches, readying and thread membership, nothing more.</summary>
    public const KernelTraceEventParser.Keywords Live =
        KernelTraceEventParser.Keywords.Thread
        | KernelTraceEventParser.Keywords.ContextSwitch
        | KernelTraceEventParser.Keywords.Dispatcher;

    public static KernelTraceEventParser.Keywords For(CaptureRequest request)
    {
        var keywords = Scheduler;
        if (request.Syscalls != CaptureSyscalls.None) keywords |= KernelTraceEventParser.Keywords.SystemCall;
        if (request.SampledStacks) keywords |= KernelTraceEventParser.Keywords.Profile;
        return keywords;
    }

    /// <summary>
    /// Stacks are collected only when asked for: for sampled profiles and context switches (SampledStacks), for
    /// context switches and readying (`--stacks`: CSwitch and ReadyThread walks, which the .etl reader attaches).
    /// </summary>
    public static KernelTraceEventParser.Keywords StacksFor(CaptureRequest request)
    {
        var keywords = KernelTraceEventParser.Keywords.None;
        if (request.SampledStacks)
            keywords |= KernelTraceEventParser.Keywords.Profile | KernelTraceEventParser.Keywords.ContextSwitch;
        if (request.SwitchStacks)
            keywords |= KernelTraceEventParser.Keywords.ContextSwitch | KernelTraceEventParser.Keywords.Dispatcher;
        return keywords;
    }

    /// <summary>
    /// ETW buffers are sized in MB for the whole session; the per-CPU request is multiplied out and clamped.
    /// </summary>
    public static int BufferSizeMb(int perCpuKb, int cpus) =>
        (int)Math.Clamp((long)perCpuKb * Math.Max(1, cpus) / 1024, 16, 1024);
}
