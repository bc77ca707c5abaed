using TraceLab.Core;
using TraceLab.Formats.Ftrace;

namespace TraceLab.Capture.Linux;

/// <summary>
/// The tracefs `--live` source: twice a second it decodes the whole pages the copiers have appended to the per-CPU
/// raw files since the last look (the files are page-aligned; the copiers' write buffer delays the newest pages),
/// and hands the events to a sink in timestamp order. CPUs' files advance unevenly, so events are held back until
/// they are <see cref="HoldBackNs"/> older than the newest seen; later stragglers are delivered as they come.
/// It only reads the recording: the trace.dat written at the end is unaffected.
/// </summary>
internal sealed class TracefsLivePump : IDisposable
{
    public const long HoldBackNs = 1_000_000_000;

    private readonly HeaderPageLayout _layout;
    private readonly KernelEventDecoder _decoder;
    private readonly IReadOnlyList<string> _files;
    private readonly long[] _offsets;
    private readonly IKernelEventSink _sink;
    private readonly List<KernelEvent> _pending = [];
    private readonly CancellationTokenSource _stop = new();
    private readonly Thread _thread;
    private long _newest = long.MinValue;

    public TracefsLivePump(HeaderPageLayout layout, IEnumerable<FtraceEventFormat> formats, IReadOnlyList<string> files,
        IKernelEventSink sink)
    {
        _layout = layout;
        _decoder = new KernelEventDecoder(formats, new ThreadTable());
        _files = files;
        _offsets = new long[files.Count];
        _sink = sink;
        _thread = new Thread(Loop) { IsBackground = true, Name = "tracelab-live" };
    }

    public void Start() => _thread.Start();

    private void Loop()
    {
        var page = new byte[_layout.PageSize];
        while (!_stop.IsCancellationRequested)
        {
            try
            {
                Poll(page, flush: false);
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or TraceFormatException)
            {
                // A preview: a page it cannot read now is skipped; the recording itself is not affected.
            }
            _stop.Token.WaitHandle.WaitOne(500);
        }
    }

    /// <summary>
    /// Reads new whole pages of every CPU, then delivers what is old enough (everything when flushing).
    /// </summary>
    internal void Poll(byte[] page, bool flush)
    {
        for (var cpu = 0; cpu < _files.Count; cpu++)
        {
            using var f =
                new FileStream(_files[cpu], FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete);
            var whole = f.Length / page.Length * page.Length;
            f.Position = _offsets[cpu];
            while (_offsets[cpu] < whole)
            {
                f.ReadExactly(page);
                _offsets[cpu] += page.Length;
                Decode(page, cpu);
            }
        }
        _pending.Sort((a, b) => a.Timestamp.CompareTo(b.Timestamp));
        var cut = flush ? long.MaxValue : _newest - HoldBackNs;
        var n = 0;
        while (n < _pending.Count && _pending[n].Timestamp <= cut)
        {
            var e = _pending[n++];
            _sink.OnEvent(in e);
        }
        _pending.RemoveRange(0, n);
    }

    private void Decode(byte[] page, int cpu)
    {
        var reader = new RingBufferPageReader(page, _layout, _files[cpu]);
        var e = default(KernelEvent);
        while (reader.TryReadNext(out var ts, out var payload))
        {
            if (payload.IsEmpty || !_decoder.Decode(payload, (long)ts, cpu, ref e)) continue;
            _pending.Add(e);
            if (e.Timestamp > _newest) _newest = e.Timestamp;
        }
    }

    public void Dispose()
    {
        _stop.Cancel();
        if (_thread.IsAlive && !_thread.Join(TimeSpan.FromSeconds(5))) return;
        try
        {
            // The held-back last second too, so the final full interval is shown.
            if (_thread.ThreadState != ThreadState.Unstarted) Poll(new byte[_layout.PageSize], flush: true);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or TraceFormatException)
        {
        }
        _stop.Dispose();
    }
}
