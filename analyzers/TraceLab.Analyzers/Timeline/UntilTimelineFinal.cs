using TraceLab.Core;

namespace TraceLab.Analyzers.Timeline;

/// <summary>
/// Feeds a pass that records only a timeline (report.html's focused window, read again once the report knows where)
/// and, every <see cref="CheckEvents"/> events, asks whether the recording is final
/// (<see cref="TimelineAnalyzer.IsFinal"/>); then cancels <paramref name="final"/>, so the reader stops at its next
/// cancellation check instead of reading the rest of the trace. The events read after that change nothing: they are
/// not passed on.
/// </summary>
/// <param name="checkEvents">Events between two checks: a check walks every thread and lock object.</param>
/// <param name="onReadingThread">
/// This sink is called on the reader's own thread (no analysis thread between them): once final it throws
/// <see cref="OperationCanceledException"/> (of <paramref name="final"/>'s token), which stops the reader at once. A
/// reader checks its token only every so many records, and a perf.data reader not while it delivers a round (the busy
/// perf.data's second pass went on for 66,000 events, a tenth of it, after its recording was final).
/// </param>
public sealed class UntilTimelineFinal(IKernelEventSink sink, TimelineAnalyzer timeline, CancellationTokenSource final,
    int checkEvents = UntilTimelineFinal.CheckEvents, bool onReadingThread = false) : IKernelEventSink
{
    public const int CheckEvents = 1 << 14;

    private int _sinceCheck;

    public void OnEvent(in KernelEvent e)
    {
        if (final.IsCancellationRequested)
        {
            if (onReadingThread) throw new OperationCanceledException(final.Token);
            return;
        }
        sink.OnEvent(in e);
        if (++_sinceCheck < checkEvents) return;
        _sinceCheck = 0;
        if (!timeline.IsFinal(e.Timestamp)) return;
        final.Cancel();
        if (onReadingThread) throw new OperationCanceledException(final.Token);
    }
}
