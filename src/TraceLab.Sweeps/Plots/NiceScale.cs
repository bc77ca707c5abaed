namespace TraceLab.Sweeps.Plots;

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
}
