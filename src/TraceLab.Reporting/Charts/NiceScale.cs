namespace TraceLab.Reporting.Charts;

/// <summary>Axis ticks at "nice" numbers (1, 2, 2.5, 5 × 10^k) covering a range (Heckbert's labelling).</summary>
public static class NiceScale
{
    public static IReadOnlyList<double> Ticks(double min, double max, int maxTicks = 6)
    {
        if (!(max > min)) max = min + (min == 0 ? 1 : Math.Abs(min) * 0.1);
        var step = NiceNumber((max - min) / Math.Max(1, maxTicks - 1), round: true);
        var lo = Math.Floor(min / step) * step;
        var hi = Math.Ceiling(max / step) * step;
        var ticks = new List<double>();
        // Count steps instead of adding them up, so 0.1 + 0.2 style drift never adds or drops a tick.
        var n = (int)Math.Round((hi - lo) / step);
        for (var i = 0; i <= n; i++) ticks.Add(Math.Round(lo + i * step, 12));
        return ticks;
    }

    public static double NiceNumber(double x, bool round)
    {
        var exp = Math.Floor(Math.Log10(x));
        var f = x / Math.Pow(10, exp);
        double nice = round
            ? f < 1.5 ? 1 : f < 2.25 ? 2 : f < 3.5 ? 2.5 : f < 7.5 ? 5 : 10
            : f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10;
        return nice * Math.Pow(10, exp);
    }

    /// <summary>
    /// Ticks at 1, 2, 5 × 10^k from just below <paramref name="min"/> to just above <paramref name="max"/> (both &gt;
    /// 0).
    /// </summary>
    public static IReadOnlyList<double> LogTicks(double min, double max)
    {
        if (!(min > 0)) min = max > 0 ? max / 10 : 1;
        if (!(max > min)) max = min * 10;
        var ticks = new List<double>();
        for (var exp = (int)Math.Floor(Math.Log10(min)); exp <= (int)Math.Ceiling(Math.Log10(max)); exp++)
            foreach (var m in new[] { 1.0, 2.0, 5.0 })
                ticks.Add(Math.Round(m * Math.Pow(10, exp), Math.Clamp(2 - exp, 0, 15)));
        // Keep one tick at or below min and one at or above max.
        var lo = ticks.Last(t => t <= min);
        var hi = ticks.First(t => t >= max);
        return ticks.Where(t => t >= lo && t <= hi).ToList();
    }
}
