using TraceLab.Core;

namespace TraceLab.Formats.PerfData;

/// <summary>
/// Counts what reaches the sink and keeps the first and last timestamps. Sealed and passed as itself, so the merge's
/// per-event call to it is direct.
/// </summary>
internal sealed class CountingSink(IKernelEventSink inner) : IKernelEventSink
{
    public long Count;
    public long First;
    public long Last;

    public void OnEvent(in KernelEvent e)
    {
        if (Count++ == 0) First = e.Timestamp;
        Last = e.Timestamp;
        inner.OnEvent(in e);
    }
}
