using System.Globalization;
using System.Net;
using System.Text;
using TraceLab.Analyzers.Timeline;

namespace TraceLab.Reporting.Html;

/// <summary>
/// Draws a <see cref="TimelineData"/> as an inline SVG: one row per thread (running / runnable / blocked segments),
/// wake arrows from waker row to wakee row (lock handoffs in the convoy colour), one row per lock object with its
/// convoy episodes, which are also shaded across the thread rows, and futile wakeups as red dots.
/// </summary>
public static class TimelineSvg
{
    /// <summary>Items <see cref="Write"/> draws (<see cref="Drawn"/>).</summary>
    public readonly record struct TimelineCounts(int Segments, int Wakes, int Handoffs, int FutileWakeups);

    public const int LabelWidth = 230;
    public const int PlotWidth = 1000;
    public const int Width = LabelWidth + PlotWidth + 20;
    private const int AxisHeight = 30;
    private const int ObjectRowHeight = 16;
    private const int RowHeight = 24;
    private const int RowGap = 8;

    /// <summary>
    /// Wake arrows, or futile-wakeup dots, above this many (one per pixel of the plot) start hidden: they would cover
    /// the rows (docs/metrics.md#timeline-dense-marks).
    /// </summary>
    public const int MaxShownMarks = PlotWidth;

    private static readonly CultureInfo Inv = CultureInfo.InvariantCulture;

    public static string Render(TimelineData data, IReadOnlyList<TimelineRow> rows, Func<int, string> nameOf)
    {
        using var svg = new StringWriter(CultureInfo.CurrentCulture);
        Write(svg, data, rows, nameOf);
        return svg.ToString();
    }

    /// <summary>As <see cref="Render"/>, written out as it is drawn (one row per thread: 100,000 threads are ~20 MB of
    /// text).</summary>
    /// <param name="hidden">The wake arrows, the futile-wakeup dots: drawn hidden (the page's check boxes show
    /// them).</param>
    public static void Write(TextWriter svg, TimelineData data, IReadOnlyList<TimelineRow> rows,
        Func<int, string> nameOf, (bool Wakes, bool Futile) hidden = default)
    {
        var length = Math.Max(1, data.End - data.Start);
        double X(long t) =>
            LabelWidth + (double)(Math.Clamp(t, data.Start, data.End) - data.Start) / length * PlotWidth;
        // Formatted straight into the text, the characters of "0.##", "0.000" and "0.0" (SvgNumbers.cs).
        SvgCoordinate F(double v) => new(v);
        SvgFixed Ms(long t) => SvgFixed.Milliseconds(t - data.Anchor);
        SvgFixed Us(long ns) => SvgFixed.Microseconds(ns);

        var objects = data.Episodes.Select(e => e.Object).Distinct().ToList();
        var top = AxisHeight + objects.Count * (ObjectRowHeight + 4) + (objects.Count > 0 ? 6 : 0);
        var rowY = new Dictionary<int, double>();
        for (var i = 0; i < rows.Count; i++) rowY[rows[i].Tid] = top + i * (RowHeight + RowGap);
        var height = top + rows.Count * (RowHeight + RowGap) + 4;

        var sb = HtmlReport.SpillBuffer();
        sb.Append(Inv, $"<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {Width} {height}\" ");
        sb.Append(Inv, $"width=\"{Width}\" height=\"{height}\" role=\"img\" aria-label=\"thread timeline\">\n");
        sb.Append("<defs><marker id=\"arrow\" viewBox=\"0 0 6 6\" refX=\"5\" refY=\"3\" markerWidth=\"5\" "
            + "markerHeight=\"5\" orient=\"auto\"><path d=\"M0,0 L6,3 L0,6 z\" fill=\"#1565c0\"/></marker>");
        sb.Append("<marker id=\"arrow-handoff\" viewBox=\"0 0 6 6\" refX=\"5\" refY=\"3\" markerWidth=\"5\" "
            + "markerHeight=\"5\" orient=\"auto\"><path d=\"M0,0 L6,3 L0,6 z\" fill=\"#6a1b9a\"/></marker></defs>\n");

        // Axis: about ten ticks at a 1-2-5 step, labelled in ms from the region's begin.
        var step = NiceStep(length / 10.0);
        sb.Append("<g class=\"tl-axis\">");
        sb.Append(Inv, $"<line x1=\"{LabelWidth}\" y1=\"{AxisHeight - 6}\" x2=\"{LabelWidth + PlotWidth}\" ");
        sb.Append(Inv, $"y2=\"{AxisHeight - 6}\"/>");
        var firstTick = (long)Math.Ceiling((data.Start - data.Anchor) / step) * step + data.Anchor;
        for (var t = (double)firstTick; t <= data.End; t += step)
        {
            var x = X((long)t);
            sb.Append(
                Inv, $"<line x1=\"{F(x)}\" y1=\"{AxisHeight - 10}\" x2=\"{F(x)}\" y2=\"{height}\" class=\"grid\"/>");
            // Labels at the edges are aligned inwards so that they neither overlap the unit nor leave the picture.
            var anchor = x < LabelWidth + 25 ? "start" : x > LabelWidth + PlotWidth - 25 ? "end" : "middle";
            sb.Append(Inv, $"<text x=\"{F(x)}\" y=\"{AxisHeight - 13}\" text-anchor=\"{anchor}\">{Ms((long)t)}</text>");
        }
        sb.Append(Inv, $"<text x=\"{LabelWidth - 8}\" y=\"{AxisHeight - 13}\" text-anchor=\"end\" class=\"unit\">ms ");
        sb.Append(Inv, $"from region begin</text>");
        sb.Append("</g>\n");

        // Convoy episodes: a row per lock object, and a shaded band across the thread rows.
        sb.Append("<g class=\"tl-convoys\">");
        for (var i = 0; i < objects.Count; i++)
        {
            var y = AxisHeight + i * (ObjectRowHeight + 4);
            sb.Append(Inv, $"<text x=\"{LabelWidth - 8}\" y=\"{y + 12}\" text-anchor=\"end\" ");
            sb.Append(Inv, $"class=\"obj-label\">convoy: {Esc(objects[i].ToString())}</text>");
            foreach (var e in data.Episodes.Where(e => e.Object == objects[i]))
            {
                double x1 = X(e.Start), x2 = X(e.End);
                var title = $"convoy on {e.Object}: {e.Handoffs:N0} handoffs, {Ms(e.Start)}–{Ms(e.End)} ms";
                sb.Append(Inv, $"<rect class=\"episode\" x=\"{F(x1)}\" y=\"{y}\" width=\"{F(Math.Max(1, x2 - x1))}\" ");
                sb.Append(Inv, $"height=\"{ObjectRowHeight}\"><title>{Esc(title)}</title></rect>");
                if (rows.Count > 0)
                {
                    sb.Append(Inv, $"<rect class=\"episode-band\" x=\"{F(x1)}\" y=\"{top - 3}\" ");
                    sb.Append(Inv, $"width=\"{F(Math.Max(1, x2 - x1))}\" height=\"{height - top}\"/>");
                }
            }
        }
        sb.Append("</g>\n");

        // Thread rows, each with its segments in recorded order (one look through the segments, not one per row).
        var segmentsOf = new Dictionary<int, List<int>>();
        foreach (var row in rows) segmentsOf.TryAdd(row.Tid, []);
        for (var i = 0; i < data.Segments.Count; i++)
            if (segmentsOf.TryGetValue(data.Segments[i].Tid, out var its)) its.Add(i);
        var column = new TimelineColumn();
        var band = new TimelineColumn();
        void Segment(int i, double x1, double x2, double y)
        {
            var s = data.Segments[i];
            // No string per segment (a system report draws tens of thousands): the CPU is formatted in place.
            var running = s.State == ThreadRunState.Running;
            var (cls, what) = s.State switch
            {
                ThreadRunState.Running => ("run", "running on CPU "),
                ThreadRunState.Runnable => ("ready", "runnable (waiting for a CPU)"),
                _ => ("blocked", "blocked"),
            };
            sb.Append(Inv, $"<rect class=\"seg {cls}\" x=\"{F(x1)}\" y=\"{F(y)}\" ");
            sb.Append(Inv, $"width=\"{F(Math.Max(0.4, x2 - x1))}\" height=\"{RowHeight}\"><title>{what}");
            if (running) sb.Append(s.Cpu);
            sb.Append(Inv, $": {Ms(s.Start)}–{Ms(s.End)} ms ({Us(s.End - s.Start)} µs)</title></rect>");
        }
        // The column gathered so far ends: one segment is drawn as it is, several join the band.
        void Close(double y)
        {
            if (column.IsEmpty) return;
            if (column.Count == 1)
            {
                DrawBand(y);
                Segment(column.First, column.X1, column.X2, y);
            }
            else
            {
                column.Stack(RowHeight);
                if (band.IsEmpty || band.Heights != column.Heights || !band.Continues(column.X1))
                {
                    // The column starts the next band; the drawn band, emptied, gathers the next column.
                    DrawBand(y);
                    (band, column) = (column, band);
                }
                else
                {
                    band.Absorb(column);
                }
            }
            column.Clear();
        }
        void DrawBand(double y)
        {
            if (band.IsEmpty) return;
            var (seenRunning, seenRunnable, seenBlocked) = band.Seen;
            sb.Append(Inv, $"<g class=\"mix\" data-segments=\"{band.Count}\"><title>{band.Count:N0} segments ");
            sb.Append(Inv, $"narrower than a pixel, {Ms(band.Start)}–{Ms(band.End)} ms:");
            if (seenRunning) sb.Append(Inv, $" running {Us(band.RunningNs)} µs");
            if (seenRunnable) sb.Append(seenRunning ? "," : "").Append(Inv, $" runnable {Us(band.RunnableNs)} µs");
            if (seenBlocked)
                sb.Append(seenRunning || seenRunnable ? "," : "").Append(Inv, $" blocked {Us(band.BlockedNs)} µs");
            sb.Append("</title>");
            var width = F(Math.Max(0.4, band.X2 - band.X1));
            var top = y;
            foreach (var (cls, px) in (ReadOnlySpan<(string, int)>)
                [("run", band.Heights.Running), ("ready", band.Heights.Runnable), ("blocked", band.Heights.Blocked)])
            {
                if (px == 0) continue;
                sb.Append(Inv, $"<rect class=\"{cls}\" x=\"{F(band.X1)}\" y=\"{F(top)}\" width=\"{width}\" ");
                sb.Append(Inv, $"height=\"{px}\"/>");
                top += px;
            }
            sb.Append("</g>");
            band.Clear();
        }
        foreach (var row in rows)
        {
            Spill(svg, sb);
            var y = rowY[row.Tid];
            sb.Append(Inv, $"<g class=\"tl-row\" data-tid=\"{row.Tid}\">");
            sb.Append(Inv, $"<text x=\"{LabelWidth - 8}\" y=\"{F(y + 16)}\" text-anchor=\"end\" ");
            sb.Append(Inv, $"class=\"row-label\">{Esc(row.Label)}</text>");
            sb.Append(Inv,
                $"<rect class=\"lane\" x=\"{LabelWidth}\" y=\"{F(y)}\" width=\"{PlotWidth}\" height=\"{RowHeight}\"/>");
            // A segment a pixel wide or more is drawn as it is; runs of narrower ones as stacked columns, and
            // columns side by side with the same stripes as one (docs/metrics.md#timeline-columns).
            foreach (var i in segmentsOf[row.Tid])
            {
                Spill(svg, sb);
                var s = data.Segments[i];
                double x1 = X(s.Start), x2 = X(s.End);
                var wide = x2 - x1 >= TimelineColumn.MinSegmentPixels;
                if (!column.IsEmpty && (wide || !column.Continues(x1))) Close(y);
                if (wide)
                {
                    DrawBand(y);
                    Segment(i, x1, x2, y);
                    continue;
                }
                column.Add(i, s, x1, x2);
                if (column.IsFull) Close(y);
            }
            Close(y);
            DrawBand(y);
            sb.Append("</g>\n");
        }

        // Wake arrows: waker row → wakee row; a wakeup by a thread without a row is a tick above the wakee's row.
        var handoffs = data.Handoffs.Select(h => (h.WokenAt, h.Receiver)).ToHashSet();
        // Each thread's "name (tid)", HTML-escaped once: the escaping goes character by character, so escaping the
        // pieces of a title gives the title escaped whole, without a string per wakeup.
        var named = new Dictionary<int, string>();
        string Named(int tid)
        {
            if (!named.TryGetValue(tid, out var text))
                named[tid] = text = Esc($"{nameOf(tid)} ({tid.ToString(Inv)})");
            return text;
        }
        sb.Append(hidden.Wakes ? "<g class=\"tl-wakes\" style=\"display:none\">" : "<g class=\"tl-wakes\">");
        foreach (var w in data.Wakes)
        {
            Spill(svg, sb);
            if (!rowY.TryGetValue(w.Wakee, out var yTo)) continue;
            var x = F(X(w.Timestamp));
            var handoff = handoffs.Contains((w.Timestamp, w.Wakee));
            var kind = handoff ? "lock handoff" : "wakeup";
            var by = w.Waker == 0 ? "an interrupt" : Named(w.Waker);
            if (w.Waker != 0 && rowY.TryGetValue(w.Waker, out var yFrom) && w.Waker != w.Wakee)
            {
                double y1 = yFrom + RowHeight / 2.0, y2 = yTo < yFrom ? yTo + RowHeight : yTo;
                sb.Append(Inv, $"<line class=\"wake{(handoff ? " handoff" : "")}\" x1=\"{x}\" y1=\"{F(y1)}\" ");
                sb.Append(Inv, $"x2=\"{x}\" y2=\"{F(y2)}\" ");
                sb.Append(Inv, $"marker-end=\"url(#{(handoff ? "arrow-handoff" : "arrow")})\"><title>");
                sb.Append(Inv, $"{kind}: {by} woke {Named(w.Wakee)} at {Ms(w.Timestamp)} ms</title></line>");
            }
            else
            {
                sb.Append(Inv, $"<path class=\"wake-ext\" d=\"M{x},{F(yTo)} l-3,-6 h6 z\"><title>");
                sb.Append(Inv, $"{kind}: {by} woke {Named(w.Wakee)} at {Ms(w.Timestamp)} ms</title></path>");
            }
        }
        sb.Append("</g>\n");

        sb.Append(hidden.Futile ? "<g class=\"tl-futile\" style=\"display:none\">" : "<g class=\"tl-futile\">");
        foreach (var f in data.FutileWakeups)
        {
            Spill(svg, sb);
            if (!rowY.TryGetValue(f.Tid, out var y)) continue;
            sb.Append(Inv, $"<circle class=\"futile\" cx=\"{F(X(f.BlockedAt))}\" cy=\"{F(y + RowHeight / 2.0)}\" ");
            sb.Append(Inv, $"r=\"3.5\"><title>futile wakeup: woken at {Ms(f.WokenAt)} ms, blocked again after ");
            sb.Append(Inv, $"{Us(f.BlockedAt - f.WokenAt)} µs without progress</title></circle>");
        }
        svg.Write(sb.Append("</g>\n</svg>"));
    }

    /// <summary>
    /// How many of each item <see cref="Write"/> draws for <paramref name="rows"/>: segments of a row's thread,
    /// wakeups into a row (an arrow, or a tick when the waker has no row), handoffs to a row woken in the window (their
    /// arrows), futile wakeups on a row. Convoy episodes are all drawn (a row per lock).
    /// </summary>
    public static TimelineCounts Drawn(TimelineData data, IReadOnlyList<TimelineRow> rows)
    {
        var drawn = rows.Select(r => r.Tid).ToHashSet();
        return new TimelineCounts(
            data.Segments.Count(s => drawn.Contains(s.Tid)),
            data.Wakes.Count(w => drawn.Contains(w.Wakee)),
            data.Handoffs.Count(h => drawn.Contains(h.Receiver) && h.WokenAt >= data.Start && h.WokenAt <= data.End),
            data.FutileWakeups.Count(f => drawn.Contains(f.Tid)));
    }

    /// <summary>Writes out what <paramref name="sb"/> collected once it is large.</summary>
    private static void Spill(TextWriter svg, StringBuilder sb)
    {
        if (sb.Length < HtmlReport.SpillChars) return;
        svg.Write(sb);
        sb.Clear();
    }

    /// <summary>The 1-2-5 step (in ns) closest above <paramref name="rough"/>.</summary>
    public static double NiceStep(double rough)
    {
        var p = Math.Pow(10, Math.Floor(Math.Log10(Math.Max(1, rough))));
        foreach (var m in new[] { 1, 2, 5, 10 })
            if (m * p >= rough) return m * p;
        return 10 * p;
    }

    private static string Esc(string s) => WebUtility.HtmlEncode(s);
}
