using TraceLab.Core;

namespace TraceLab.Formats.Etl;

/// <summary>A reader of a temporary copy: the same events, and the copy deleted when the reader is.</summary>
internal sealed class ExtractedTraceReader : IKernelTraceReader
{
    private readonly IKernelTraceReader _reader;
    private readonly EtlZipCopy _copy;

    public ExtractedTraceReader(IKernelTraceReader reader, EtlZipCopy copy)
    {
        _reader = reader;
        _copy = copy;
        copy.DeleteEarly();
    }

    public TraceInfo Info => _reader.Info;

    public ThreadTable Threads => _reader.Threads;

    public void Read(IKernelEventSink sink, CancellationToken cancellationToken = default) =>
        _reader.Read(sink, cancellationToken);

    public void Dispose()
    {
        _reader.Dispose();
        _copy.Dispose();
    }
}
