namespace TraceLab.Sweeps;

/// <summary>
/// An ad-hoc sweep from the command line: --param NAME --values LIST [--series NAME --series-values LIST]. No verdicts.
/// </summary>
public static class CustomSweep
{
    public const string Name = "custom";

    public static SweepDefinition Create(string workload, string param, IReadOnlyList<string> values,
        string? seriesParam, IReadOnlyList<string>? seriesValues)
    {
        if (values.Count == 0) throw new SweepException("--values needs at least one value");
        if (values.Distinct().Count() != values.Count)
            throw new SweepException($"--values repeats a value: {string.Join(",", values)}");
        if ((seriesParam is null) != (seriesValues is null))
            throw new SweepException("--series and --series-values go together");
        if (seriesParam is not null && string.Equals(seriesParam, param, StringComparison.OrdinalIgnoreCase))
            throw new SweepException("--series must name another parameter than --param");
        if (seriesValues is { Count: 0 }) throw new SweepException("--series-values needs at least one value");
        return new SweepDefinition
        {
            Name = Name,
            Workload = workload,
            Title = seriesParam is null ? $"{param} = {string.Join(", ", values)}"
                : $"{param} = {string.Join(", ", values)}, one series per {seriesParam}",
            XParameter = param,
            XValues = values,
            Series = seriesParam is null ? [SweepSeries.Single] : SweepSeries.Grid((seriesParam, seriesValues!)),
        };
    }

    /// <summary>
    /// Splits "1,2,4" and expands integer ranges "1-4" (a CPU list like "0-1" stays one value for affinity).
    /// </summary>
    public static IReadOnlyList<string> ParseList(string text, bool expandRanges)
    {
        var items = new List<string>();
        foreach (var part in text.Split(',', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries))
        {
            var dash = part.IndexOf('-', 1);
            if (expandRanges && dash > 0 && long.TryParse(part[..dash], out var lo)
                && long.TryParse(part[(dash + 1)..], out var hi))
            {
                if (hi < lo || hi - lo > 1000) throw new SweepException($"'{part}' is not a usable range");
                for (var v = lo; v <= hi; v++) items.Add(v.ToString(System.Globalization.CultureInfo.InvariantCulture));
            }
            else items.Add(part);
        }
        return items;
    }
}
