namespace TraceLab.Core;

/// <summary>Consumes events in timestamp order. Implementations must not allocate per event.</summary>
public interface IKernelEventSink
{
    void OnEvent(in KernelEvent e);
}
