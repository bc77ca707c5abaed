namespace TraceLab.Charts;

/// <summary>
/// Recognises a drawing library that cannot load (libSkiaSharp.so or one of its libraries, e.g. libfontconfig, is
/// missing): the report is still written, without charts, and the run says why in one line.
/// </summary>
public static class ChartLibrary
{
    private static readonly Lazy<string?> Probed = new(() =>
    {
        try
        {
            new ScottPlot.Plot().GetImageBytes(4, 4, ScottPlot.ImageFormat.Png);
            return null;
        }
        catch (Exception ex) when (IsUnavailable(ex))
        {
            return Reason(ex);
        }
    });

    /// <summary>Null when a chart can be drawn here; otherwise why not (tests skip with it).</summary>
    public static string? Unavailable => Probed.Value;

    public static bool IsUnavailable(Exception ex) => Innermost(ex) is DllNotFoundException or BadImageFormatException
        or EntryPointNotFoundException or TypeInitializationException;

    public static string Reason(Exception ex)
    {
        var inner = Innermost(ex);
        return $"the native drawing library (SkiaSharp) could not be loaded ({inner.GetType().Name}: " +
            $"{FirstSentence(inner.Message)}); on Debian/Ubuntu: apt-get install libfontconfig1 fonts-dejavu-core";
    }

    // .NET's DllNotFoundException goes on about strace and LD_DEBUG: the first sentence says what is missing.
    private static string FirstSentence(string message)
    {
        var line = message.Split('\n')[0].Trim();
        var end = line.IndexOf(". ", StringComparison.Ordinal);
        return end < 0 ? line.TrimEnd('.') : line[..end];
    }

    private static Exception Innermost(Exception ex)
    {
        while (ex is AggregateException { InnerException: { } a }) ex = a;
        while (ex is TypeInitializationException { InnerException: { } t }) ex = t;
        return ex;
    }
}
