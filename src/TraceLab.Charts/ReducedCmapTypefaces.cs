using System.Collections.Concurrent;
using SkiaSharp;

namespace TraceLab.Charts;

/// <summary>
/// The <see cref="ReducedCmapTypeface"/> of each typeface the charts use, built once per process (thread-safe: the
/// charts are drawn on several threads at once). The drawing library keeps one typeface object per font and style, so
/// the cache holds a handful.
/// </summary>
public static class ReducedCmapTypefaces
{
    private static readonly ConcurrentDictionary<SKTypeface, Lazy<ReducedCmapTypeface?>> Built =
        new(ReferenceEqualityComparer.Instance);

    /// <summary>
    /// The reduced typeface of <paramref name="original"/>, or null where there is none (the original is then used).
    /// Only where the drawing library renders with FreeType (Linux), where the same bytes are checked; on Windows it
    /// uses DirectWrite, whose typefaces from data and whose glyph-to-character map are other code.
    /// </summary>
    public static ReducedCmapTypeface? Of(SKTypeface original) => OperatingSystem.IsLinux()
        ? Built.GetOrAdd(original, o => new Lazy<ReducedCmapTypeface?>(() => ReducedCmapTypeface.Create(o))).Value
        : null;
}
