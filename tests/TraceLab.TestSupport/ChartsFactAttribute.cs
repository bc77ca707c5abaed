using TraceLab.Charts;
using Xunit;

namespace TraceLab.TestSupport;

/// <summary>
/// A test that draws real PNG or SVG: skipped, with the reason, where the native drawing library (libSkiaSharp.so
/// and the libraries it needs, e.g. libfontconfig) cannot be loaded.
/// </summary>
public sealed class ChartsFactAttribute : FactAttribute
{
    public ChartsFactAttribute()
    {
        if (ChartLibrary.Unavailable is { } reason) Skip = reason;
    }
}
