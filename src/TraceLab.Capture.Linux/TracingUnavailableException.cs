using TraceLab.Core.Capture;

namespace TraceLab.Capture.Linux;

/// <summary>Kernel tracing cannot be used here; the message is one actionable line for the user.</summary>
public sealed class TracingUnavailableException : CaptureUnavailableException
{
    public TracingUnavailableException(string message) : base(message) { }
    public TracingUnavailableException(string message, Exception inner) : base(message, inner) { }
    public TracingUnavailableException() { }
}
