using TraceLab.Core;

namespace TraceLab.Analyzers.Timeline;

/// <summary>
/// Feeds a pass that records only a timeline (report.html's focused window, read again once the report knows where)
/// and, every <see cref="CheckEvents"/> events, asks whether the recording is final
/// (<see cref="TimelineAnalyzer.IsFinal"/>); then cancels <paramref name="final"/>, so the reader stops at its next
/// cancellation check instead of reading the rest of the trace. The events read after that change nothing.
/// </summary>
/// <param name="checkEvents">Events between two checks: a check walks every thread and lock object.</param>
public sealed class UntilTimelineFinal(IKernelEventSink sink, TimelineAnalyzer timeline, CancellationTokenSource final,
    int checkEvents = UntilTimelineFinal.CheckEvents) : IKernelEventSink
{
    public const int CheckEvents = 1 << 14;

    private int _sinceCheck;

    public void OnEvent(in KernelEvent e)
    {
        sink.OnEvent(in e);
        if (++_sinceCheck < checkEvents || final.IsCancellationRequested) return;
        _sinceCheck = 0;
        if (timeline.IsFinal(e.Timestamp)) final.Cancel();
    }
}
