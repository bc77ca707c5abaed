using TraceLab.Analyzers.Timeline;

namespace TraceLab.Reporting.Html;

/// <summary>
/// Consecutive segments of one timeline row that are each narrower than a pixel, gathered into one stacked column
/// (docs/metrics.md#timeline-columns): a window of a busy thread holds far more state changes than the picture has
/// pixels, and a rect per segment drew them on top of each other, each at least 0.4 px wide however short (a 4 µs run
/// of a 128 ms window as wide as 50 µs), in a page of tens of megabytes.
/// </summary>
public sealed class TimelineColumn
{
    /// <summary>A segment at least this wide (px) is drawn on its own.</summary>
    public const double MinSegmentPixels = 1.0;

    /// <summary>A gap this wide (px) between two segments starts a new column.</summary>
    public const double MaxGapPixels = 0.5;

    public int Count { get; private set; }

    /// <summary>The first segment's index (the segment itself when <see cref="Count"/> is 1).</summary>
    public int First { get; private set; }

    public double X1 { get; private set; }
    public double X2 { get; private set; }
    public long Start { get; private set; }
    public long End { get; private set; }

    public long RunningNs { get; private set; }
    public long RunnableNs { get; private set; }
    public long BlockedNs { get; private set; }

    /// <summary>Segments of each state (a state with zero-length segments only still has its stripe).</summary>
    private int _running, _runnable, _blocked;

    /// <summary>The stripes' heights (px) once <see cref="Stack"/> ran: running, runnable, blocked from the
    /// top.</summary>
    public (int Running, int Runnable, int Blocked) Heights { get; private set; }

    public bool IsEmpty => Count == 0;

    /// <summary>Whether the segment from <paramref name="x1"/> continues this column.</summary>
    public bool Continues(double x1) => Count > 0 && x1 - X2 < MaxGapPixels;

    /// <summary>Whether the column is a pixel wide (or more): it is closed then.</summary>
    public bool IsFull => X2 - X1 >= MinSegmentPixels;

    public void Add(int index, in TimelineSegment segment, double x1, double x2)
    {
        if (Count == 0)
        {
            (First, X1, Start) = (index, x1, segment.Start);
        }
        Count++;
        X2 = Math.Max(X2, x2);
        End = Math.Max(End, segment.End);
        var ns = segment.End - segment.Start;
        switch (segment.State)
        {
            case ThreadRunState.Running:
                RunningNs += ns;
                _running++;
                break;
            case ThreadRunState.Runnable:
                RunnableNs += ns;
                _runnable++;
                break;
            default:
                BlockedNs += ns;
                _blocked++;
                break;
        }
    }

    /// <summary>Takes in <paramref name="next"/>, a column right after this one with the same stripes.</summary>
    public void Absorb(TimelineColumn next)
    {
        Count += next.Count;
        X2 = Math.Max(X2, next.X2);
        End = Math.Max(End, next.End);
        RunningNs += next.RunningNs;
        RunnableNs += next.RunnableNs;
        BlockedNs += next.BlockedNs;
        _running += next._running;
        _runnable += next._runnable;
        _blocked += next._blocked;
    }

    /// <summary>
    /// Sets <see cref="Heights"/>: <paramref name="height"/> px shared by the states in proportion to their time,
    /// in whole pixels (the largest remainders rounded up), every state the column has at least one pixel.
    /// </summary>
    public void Stack(int height)
    {
        Span<long> ns = [RunningNs, RunnableNs, BlockedNs];
        Span<int> seen = [_running, _runnable, _blocked];
        Span<int> px = stackalloc int[3];
        var total = ns[0] + ns[1] + ns[2];
        if (total == 0)
        {
            // Only zero-length segments: the states seen share the column equally.
            var states = (seen[0] > 0 ? 1 : 0) + (seen[1] > 0 ? 1 : 0) + (seen[2] > 0 ? 1 : 0);
            for (var i = 0; i < 3; i++) ns[i] = seen[i] > 0 ? 1 : 0;
            total = states;
        }
        var given = 0;
        Span<long> remainder = stackalloc long[3];
        for (var i = 0; i < 3; i++)
        {
            px[i] = (int)(ns[i] * height / total);
            remainder[i] = ns[i] * height % total;
            given += px[i];
        }
        for (; given < height; given++)
        {
            var most = 0;
            for (var i = 1; i < 3; i++)
                if (remainder[i] > remainder[most]) most = i;
            px[most]++;
            remainder[most] = -1;
        }
        // A state the column has is never drawn away: its pixel comes from the tallest stripe.
        for (var i = 0; i < 3; i++)
        {
            if (seen[i] == 0 || px[i] > 0) continue;
            var tallest = 0;
            for (var j = 1; j < 3; j++)
                if (px[j] > px[tallest]) tallest = j;
            px[tallest]--;
            px[i] = 1;
        }
        Heights = (px[0], px[1], px[2]);
    }

    /// <summary>Whether the states were seen: running, runnable, blocked.</summary>
    public (bool Running, bool Runnable, bool Blocked) Seen => (_running > 0, _runnable > 0, _blocked > 0);

    public void Clear()
    {
        (Count, First, X1, X2, Start, End) = (0, 0, 0, 0, 0, 0);
        (RunningNs, RunnableNs, BlockedNs) = (0, 0, 0);
        (_running, _runnable, _blocked) = (0, 0, 0);
        Heights = default;
    }
}
