using System.Globalization;
using Microsoft.Win32.SafeHandles;
using TraceLab.Core;
using TraceLab.Formats.Ftrace;

namespace TraceLab.Formats.TraceDat;

/// <summary>
/// Reads trace-cmd trace.dat files (v6, and v7 without compression): metadata at <see cref="Open"/>, then events
/// from every CPU (and every instance buffer in the file) merged in timestamp order.
/// </summary>
public sealed class TraceDatReader : IKernelTraceReader
{
    private readonly SafeFileHandle _handle;
    private readonly string _path;
    private readonly TraceDatMetadata _meta;
    private readonly KernelEventDecoder _decoder;
    private readonly SalvageLog? _salvage;
    private bool _read;

    private TraceDatReader(SafeFileHandle handle, string path, TraceDatMetadata meta, bool salvage)
    {
        _handle = handle;
        _path = path;
        _meta = meta;
        _salvage = salvage ? new SalvageLog(meta.PageSize, meta.Damage) : null;
        Threads = new ThreadTable();
        LoadCmdlines(meta.Cmdlines, Threads);
        _decoder = new KernelEventDecoder(meta.Formats, Threads);
        Info = new TraceInfo
        {
            Backend = "tracefs",
            TraceFile = path,
            CpuCount = meta.CpuCount,
            TraceClock = meta.TraceClock,
            KernelRelease = KernelReleaseOf(meta.Uname),
            LostEventsPerCpu = LostPerCpu(meta),
            PagesWithMissedEvents = new long[meta.CpuCount],
            SkippedFormats = meta.SkippedFormats,
        };
        _salvage?.Describe(Info);
    }

    public TraceInfo Info { get; }
    public ThreadTable Threads { get; }

    /// <summary>Event formats found in the file.</summary>
    public IReadOnlyList<FtraceEventFormat> Formats => _meta.Formats;

    /// <summary>Trace-file version (6 or 7).</summary>
    public int FileVersion => _meta.Version;

    /// <exception cref="TraceFormatException">
    /// The file is truncated, corrupt, compressed or of an unsupported kind (when salvaging: its metadata is).
    /// </exception>
    public static TraceDatReader Open(string path, TraceDatReadOptions? options = null)
    {
        var salvage = (options ?? TraceDatReadOptions.Default).Salvage;
        var handle = File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.Read, FileOptions.RandomAccess);
        try
        {
            var meta = TraceDatMetadataParser.Parse(new BoundedFileReader(handle, path), salvage);
            return new TraceDatReader(handle, path, meta, salvage);
        }
        catch
        {
            handle.Dispose();
            throw;
        }
    }

    /// <summary>Streams every event once; a second call throws because the reader is single-pass.</summary>
    public void Read(IKernelEventSink sink, CancellationToken cancellationToken = default)
    {
        if (_read) throw new InvalidOperationException("TraceDatReader.Read streams the file once; open it again to re-read.");
        _read = true;

        var layout = _meta.HeaderPage!;
        var cursors = new List<CpuCursor>();
        foreach (var range in _meta.Data)
        {
            if (range.Size == 0) continue;
            var c = new CpuCursor(_handle, _path, layout, range);
            if (Advance(c)) cursors.Add(c);
            else Count(c);
        }

        var active = cursors.ToArray();
        var n = active.Length;
        var e = new KernelEvent();
        long count = 0, first = 0, last = 0;
        while (n > 0)
        {
            var best = 0;
            var bestTs = active[0].Timestamp;
            for (var i = 1; i < n; i++)
            {
                var ts = active[i].Timestamp;
                if (ts < bestTs) { bestTs = ts; best = i; }
            }

            var cur = active[best];
            var decoded = _decoder.Decode(cur.Payload, bestTs, cur.Cpu, ref e);
            if (decoded)
            {
                sink.OnEvent(in e);
                if (count == 0) first = bestTs;
                last = bestTs;
                count++;
                if ((count & 0xFFFF) == 0) cancellationToken.ThrowIfCancellationRequested();
            }
            else
            {
                var error = new TraceFormatException(_path, cur.PayloadFileOffset,
                    $"an event record long enough for its event type ({cur.Payload.Length} bytes is too short)");
                if (_salvage is null) throw error;
                _salvage.Add(cur, error);
            }

            if (!decoded || !Advance(cur))
            {
                Count(cur);
                active[best] = active[n - 1];
                n--;
            }
        }

        Info.EventCount = count;
        Info.FirstTimestamp = first;
        Info.LastTimestamp = last;
        Info.UnknownEvents = _decoder.UnknownEventCount;
        _salvage?.Describe(Info);
    }

    public void Dispose() => _handle.Dispose();

    /// <summary>Moves a cursor on; when salvaging, damage ends that CPU's stream (recorded) instead of the whole read.</summary>
    private bool Advance(CpuCursor c)
    {
        try
        {
            return c.MoveNext();
        }
        catch (TraceFormatException error) when (_salvage is not null)
        {
            _salvage.Add(c, error);
            return false;
        }
    }

    private void Count(CpuCursor c)
    {
        var pages = Info.PagesWithMissedEvents!;
        if (c.Cpu >= 0 && c.Cpu < pages.Length) pages[c.Cpu] += c.PagesWithMissedEvents;
    }

    private static void LoadCmdlines(string text, ThreadTable threads)
    {
        foreach (var line in text.Split('\n'))
        {
            var space = line.IndexOf(' ');
            if (space <= 0) continue;
            if (int.TryParse(line.AsSpan(0, space), NumberStyles.Integer, CultureInfo.InvariantCulture, out var pid) && pid > 0)
                threads.SetName(pid, line[(space + 1)..].TrimEnd('\r'));
        }
    }

    /// <summary>The release is the third word of "Linux host 6.18.0 #1 SMP ... x86_64".</summary>
    private static string? KernelReleaseOf(string? uname)
    {
        if (uname is null) return null;
        var parts = uname.Split(' ', StringSplitOptions.RemoveEmptyEntries);
        return parts.Length >= 3 ? parts[2] : uname;
    }

    /// <summary>Loss counts of the buffers whose data the file holds (the empty top-level buffer of an instance extract is ignored).</summary>
    private static long[]? LostPerCpu(TraceDatMetadata meta)
    {
        if (meta.LostByBuffer.Count == 0) return null;
        var result = new long[meta.CpuCount];
        var buffersWithData = new HashSet<string>(StringComparer.Ordinal);
        foreach (var d in meta.Data)
            if (d.Size > 0) buffersWithData.Add(d.Buffer);
        foreach (var (buffer, perCpu) in meta.LostByBuffer)
        {
            if (!buffersWithData.Contains(buffer)) continue;
            foreach (var (cpu, lost) in perCpu)
                if (cpu >= 0 && cpu < result.Length) result[cpu] += lost;
        }

        return result;
    }
}
