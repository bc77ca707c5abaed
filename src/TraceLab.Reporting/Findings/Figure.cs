namespace TraceLab.Reporting.Findings;

internal static class Figure
{
    public static FindingFigure Of(string metric, double value) =>
        new() { Metric = metric, Value = Math.Round(value, 4) };
}
