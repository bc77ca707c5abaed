namespace TraceLab.Core;

/// <summary>Feeds every event to two sinks, in order: the first, then the second.</summary>
public sealed class TeeSink(IKernelEventSink first, IKernelEventSink second) : IKernelEventSink
{
    public void OnEvent(in KernelEvent e)
    {
        first.OnEvent(in e);
        second.OnEvent(in e);
    }
}
