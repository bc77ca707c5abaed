namespace TraceLab.Analyzers;

/// <summary>
/// The span of the trace a report covers: between the workload's TRACELAB_REGION_BEGIN and TRACELAB_REGION_END
/// markers when present; else between the TRACELAB_TARGET_BEGIN / _END markers TraceLab itself writes around a
/// traced program (its start to its end) or an attach (attach to detach); else the whole trace. A program's own
/// markers win: its BEGIN re-opens a region the target markers opened. Intervals are clipped to the region;
/// counts are taken only inside it.
/// </summary>
public sealed class MeasuredRegion
{
    public const string BeginMarker = "TRACELAB_REGION_BEGIN";
    public const string EndMarker = "TRACELAB_REGION_END";
    /// <summary>Written by TraceLab before it starts (or attaches to) the target; "TRACELAB_TARGET_BEGIN".</summary>
    public const string TargetBeginMarker = "TRACELAB_TARGET_BEGIN";
    /// <summary>Written by TraceLab when the target ended or it detached.</summary>
    public const string TargetEndMarker = "TRACELAB_TARGET_END";
    /// <summary>
    /// "TRACELAB_TARGET_PIDS 12,34": the target processes, once known (a program's pid after it started).
    /// </summary>
    public const string TargetPidsMarker = "TRACELAB_TARGET_PIDS ";

    /// <summary>"TRACELAB_THREADS 12 12,13,14": a process and its threads, which TraceLab lists from /proc for threads
    /// that existed before the capture (attach, --system): no fork event in the trace says whose they are.</summary>
    public const string ThreadsMarker = "TRACELAB_THREADS ";

    /// <summary>
    /// "TRACELAB_PROCESS_STARTS 12=5000000,34=6000000": when processes that predate the capture started, on the trace
    /// clock (from /proc/PID/stat, 10 ms resolution), for `--pid` and `--system`.
    /// </summary>
    public const string ProcessStartsMarker = "TRACELAB_PROCESS_STARTS ";

    /// <summary>
    /// "TRACELAB_SELF_PIDS 12,34": the processes of TraceLab itself (the CLI and its capture guard), which a report
    /// leaves out of its analysis and shows once as their cost (docs/metrics.md#self-exclusion).
    /// </summary>
    public const string SelfPidsMarker = "TRACELAB_SELF_PIDS ";

    private readonly List<int> _targetPids = [];
    private readonly List<int> _selfPids = [];
    private readonly Dictionary<int, long> _processStarts = [];
    private readonly Dictionary<int, int> _processOfThread = [];
    private bool _programMarkers;

    public long Begin { get; private set; } = long.MinValue;
    public long End { get; private set; } = long.MaxValue;
    public bool HasBegin { get; private set; }
    public bool HasEnd { get; private set; }
    /// <summary>Thread that wrote the begin marker (the workload's main thread), 0 if none.</summary>
    public int MarkerTid { get; private set; }
    /// <summary>True when the region is the target's (TraceLab's TARGET markers), not the program's own.</summary>
    public bool FromTarget => HasBegin && !_programMarkers;
    /// <summary>The processes TraceLab traced (TRACELAB_TARGET_PIDS); empty for workloads and --system.</summary>
    public IReadOnlyList<int> TargetPids => _targetPids;
    /// <summary>TraceLab's own processes (TRACELAB_SELF_PIDS); empty for traces TraceLab did not record.</summary>
    public IReadOnlyList<int> SelfPids => _selfPids;
    /// <summary>Thread → process, from TraceLab's TRACELAB_THREADS markers (empty for traces without them).</summary>
    public IReadOnlyDictionary<int, int> ProcessOfThread => _processOfThread;
    /// <summary>Process → start time (trace clock) from TraceLab's TRACELAB_PROCESS_STARTS markers.</summary>
    public IReadOnlyDictionary<int, long> ProcessStarts => _processStarts;
    /// <summary>
    /// Times a region was opened (the target's, then possibly the program's): analyzers reset on each.
    /// </summary>
    public int Openings { get; private set; }

    /// <summary>
    /// Returns true when this marker opened the region (the caller then drops what it accumulated before).
    /// </summary>
    public bool OnMarker(string text, long timestamp, int tid)
    {
        if (!_programMarkers && text.StartsWith(BeginMarker, StringComparison.Ordinal))
        {
            _programMarkers = true;
            HasEnd = false;
            End = long.MaxValue;
            return Open(timestamp, tid);
        }
        if (text.StartsWith(ThreadsMarker, StringComparison.Ordinal))
        {
            ParseThreads(text.AsSpan(ThreadsMarker.Length));
            return false;
        }
        if (text.StartsWith(ProcessStartsMarker, StringComparison.Ordinal))
        {
            ParseStarts(text.AsSpan(ProcessStartsMarker.Length));
            return false;
        }
        if (text.StartsWith(TargetPidsMarker, StringComparison.Ordinal))
        {
            ParsePids(text[TargetPidsMarker.Length..], _targetPids);
            return false;
        }
        if (text.StartsWith(SelfPidsMarker, StringComparison.Ordinal))
        {
            ParsePids(text[SelfPidsMarker.Length..], _selfPids);
            return false;
        }
        if (_programMarkers)
        {
            if (!HasEnd && text.StartsWith(EndMarker, StringComparison.Ordinal)) Close(timestamp);
            return false;
        }
        if (!HasBegin && text.StartsWith(TargetBeginMarker, StringComparison.Ordinal))
            return Open(timestamp, tid: 0);
        else if (HasBegin && !HasEnd && text.StartsWith(TargetEndMarker, StringComparison.Ordinal))
            Close(timestamp);
        return false;
    }

    private bool Open(long timestamp, int tid)
    {
        HasBegin = true;
        Begin = timestamp;
        MarkerTid = tid;
        Openings++;
        return true;
    }

    private void Close(long timestamp)
    {
        HasEnd = true;
        End = timestamp;
    }

    private void ParseThreads(ReadOnlySpan<char> text)
    {
        var space = text.IndexOf(' ');
        if (space <= 0 || !int.TryParse(text[..space], System.Globalization.NumberStyles.None,
                System.Globalization.CultureInfo.InvariantCulture, out var pid) || pid <= 0) return;
        foreach (var part in text[(space + 1)..].ToString().Split(','))
        {
            if (int.TryParse(part.Trim(), System.Globalization.NumberStyles.None,
                    System.Globalization.CultureInfo.InvariantCulture, out var tid) && tid > 0)
                _processOfThread[tid] = pid;
        }
    }

    private void ParseStarts(ReadOnlySpan<char> text)
    {
        foreach (var part in text.ToString().Split(','))
        {
            var eq = part.IndexOf('=', StringComparison.Ordinal);
            if (eq > 0 && int.TryParse(part.AsSpan(0, eq).Trim(), System.Globalization.NumberStyles.None,
                    System.Globalization.CultureInfo.InvariantCulture, out var pid) && pid > 0
                && long.TryParse(part.AsSpan(eq + 1).Trim(), System.Globalization.NumberStyles.AllowLeadingSign,
                    System.Globalization.CultureInfo.InvariantCulture, out var ns))
                _processStarts[pid] = ns;
        }
    }

    private static void ParsePids(string list, List<int> pids)
    {
        foreach (var part in list.Split(','))
        {
            if (int.TryParse(part.Trim(), System.Globalization.NumberStyles.None,
                    System.Globalization.CultureInfo.InvariantCulture, out var pid)
                && pid > 0 && !pids.Contains(pid))
                pids.Add(pid);
        }
    }

    public bool Contains(long t) => t >= Begin && t <= End;

    /// <summary>Length of [a, b] inside the region.</summary>
    public long Overlap(long a, long b)
    {
        var lo = Math.Max(a, Begin);
        var hi = Math.Min(b, End);
        return hi > lo ? hi - lo : 0;
    }
}
