using System.Globalization;

namespace TraceLab.Reporting.Html;

/// <summary>
/// A coordinate as the timeline's SVG prints it: the characters of <c>value.ToString("0.##", InvariantCulture)</c>,
/// formatted straight into the text. A busy system's timeline has ~60,000 numbers, and a custom format string is parsed
/// again for each of them (with the rows' segments found in one look, the busy perf.data's page 75.6 -> 48.3 ms:
/// docs/performance.md#gen0-budget).
/// </summary>
/// <remarks>
/// .NET formats a double by a custom format from its 15 significant digits, rounded half away from zero to the
/// format's decimals. Here the value is scaled to hundredths and rounded the same way; a value within a millionth of a
/// hundredth of a midpoint (where the scaling's rounding error could decide), negative, or too large for the scaling
/// to be exact is handed to <see cref="double.TryFormat(Span{char}, out int, ReadOnlySpan{char}, IFormatProvider?)"/>
/// itself. SvgNumbersTests compares the two on millions of values.
/// </remarks>
public readonly struct SvgCoordinate(double value) : ISpanFormattable
{
    /// <summary>
    /// Below this, neither the 15-digit form of the value (off by at most 5e-12 here) nor the scaling (1e-9) moves the
    /// value × 100 by anything near <see cref="MidpointMargin"/>.
    /// </summary>
    private const double Largest = 1e5;
    private const double MidpointMargin = 1e-6;

    public double Value { get; } = value;

    public bool TryFormat(Span<char> destination, out int charsWritten, ReadOnlySpan<char> format,
        IFormatProvider? provider)
    {
        var v = Value;
        if (!(v >= 0 && v < Largest))
            return v.TryFormat(destination, out charsWritten, "0.##", CultureInfo.InvariantCulture);
        var scaled = v * 100;
        var whole = Math.Floor(scaled);
        var fraction = scaled - whole;
        if (Math.Abs(fraction - 0.5) < MidpointMargin)
            return v.TryFormat(destination, out charsWritten, "0.##", CultureInfo.InvariantCulture);
        var hundredths = (long)whole + (fraction > 0.5 ? 1 : 0);
        return FixedPoint.TryWrite(destination, out charsWritten, hundredths, 2, trimZeros: true);
    }

    public string ToString(string? format, IFormatProvider? formatProvider) => ToString();

    public override string ToString()
    {
        Span<char> text = stackalloc char[32];
        return TryFormat(text, out var n, default, null) ? new string(text[..n]) : Value.ToString("0.##",
            CultureInfo.InvariantCulture);
    }
}

/// <summary>
/// A whole number of nanoseconds in a larger unit with fixed decimals, as the timeline prints times: the characters of
/// <c>(ns / 10^Scale).ToString("0.000")</c> (or "0.0", ...; <see cref="Decimals"/> zeros after the point), formatted
/// straight into the text.
/// </summary>
/// <remarks>
/// The double <c>ns / 10^Scale</c> has at most 15 significant digits while |ns| &lt; 10^15, so its 15-digit form (what
/// .NET rounds a custom format from) is the exact decimal, and rounding it half away from zero is integer arithmetic
/// on <c>ns</c>. Larger or negative values are formatted by .NET itself.
/// </remarks>
public readonly struct SvgFixed : ISpanFormattable
{
    private const long Exact = 1_000_000_000_000_000;

    // Only the units the timeline prints (below): the unit and decimals stay within Tens.
    private SvgFixed(long nanoseconds, int scale, int decimals) =>
        (Nanoseconds, Scale, Decimals) = (nanoseconds, scale, decimals);

    public long Nanoseconds { get; }

    /// <summary>The unit as a power of ten of nanoseconds (6: ms, 3: µs).</summary>
    public int Scale { get; }

    public int Decimals { get; }

    /// <summary>In ms with three decimals ("0.000").</summary>
    public static SvgFixed Milliseconds(long ns) => new(ns, 6, 3);

    /// <summary>In µs with one decimal ("0.0").</summary>
    public static SvgFixed Microseconds(long ns) => new(ns, 3, 1);

    public bool TryFormat(Span<char> destination, out int charsWritten, ReadOnlySpan<char> format,
        IFormatProvider? provider)
    {
        var ns = Nanoseconds;
        if (ns < 0 || ns >= Exact) return Slow(destination, out charsWritten);
        var unit = Tens[Scale - Decimals];
        var kept = ns / unit;
        if (unit > 1 && ns % unit * 2 >= unit) kept++;
        return FixedPoint.TryWrite(destination, out charsWritten, kept, Decimals, trimZeros: false);
    }

    private bool Slow(Span<char> destination, out int charsWritten) =>
        (Nanoseconds / (double)Tens[Scale]).TryFormat(destination, out charsWritten, Format(Decimals),
            CultureInfo.InvariantCulture);

    /// <summary>10^0 to 10^9, exact as doubles too: the slow path divides by what the callers did (1e6).</summary>
    private static readonly long[] Tens = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000,
        1_000_000_000];

    private static string Format(int decimals) => decimals == 0 ? "0" : "0." + new string('0', decimals);

    public string ToString(string? format, IFormatProvider? formatProvider) => ToString();

    // At most 19 digits, a point and 9 decimals: 40 characters always hold it.
    public override string ToString()
    {
        Span<char> text = stackalloc char[40];
        TryFormat(text, out var n, default, null);
        return new string(text[..n]);
    }
}

/// <summary>Writes a non-negative fixed-point number (an integer count of 10^-decimals units).</summary>
internal static class FixedPoint
{
    public static bool TryWrite(Span<char> destination, out int charsWritten, long units, int decimals,
        bool trimZeros)
    {
        Span<char> digits = stackalloc char[24];
        var n = 0;
        var shown = decimals;
        var value = units;
        if (trimZeros)
            while (shown > 0 && value % 10 == 0 && value != 0)
            {
                value /= 10;
                shown--;
            }
        if (trimZeros && value == 0) shown = 0;
        // Digits from the last: the decimals kept, the point, then the whole part (at least one digit).
        for (var i = 0; i < shown; i++)
        {
            digits[n++] = (char)('0' + value % 10);
            value /= 10;
        }
        if (shown > 0) digits[n++] = '.';
        do
        {
            digits[n++] = (char)('0' + value % 10);
            value /= 10;
        } while (value != 0);
        if (n > destination.Length)
        {
            charsWritten = 0;
            return false;
        }
        for (var i = 0; i < n; i++) destination[i] = digits[n - 1 - i];
        charsWritten = n;
        return true;
    }
}
