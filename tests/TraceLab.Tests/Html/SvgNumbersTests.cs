using System.Globalization;
using TraceLab.Reporting.Html;

namespace TraceLab.Tests.Html;

/// <summary>
/// The timeline's numbers, formatted without .NET's custom format strings, are the characters those formats give:
/// report.html stays byte-identical.
/// </summary>
public sealed class SvgNumbersTests
{
    private static readonly CultureInfo Inv = CultureInfo.InvariantCulture;

    [Fact]
    public void Coordinates_match_the_custom_format_on_random_and_edge_values()
    {
        var random = new Random(20261130);
        var values = new List<double>
        {
            0, 0.004, 0.005, 0.0049999999, 0.015, 0.025, 0.125, 0.135, 0.4, 1, 1.005, 1.015, 2.675, 230, 230.005,
            1229.995, 1230, 99999.995, 99999.99, 1e5, 1e5 + 0.005, 1e7 + 0.125, -0.001, -0.005, -1.25, double.NaN,
            double.PositiveInfinity, double.Epsilon, 1e-300,
        };
        for (var i = 0; i < 1_000_000; i++)
        {
            // The timeline's coordinates (230 + a fraction of 1000), and values near every hundredth's midpoint.
            values.Add(230 + random.NextDouble() * 1000);
            var hundredths = random.Next(0, 10_000_000);
            values.Add((hundredths + 0.5) / 100);
            values.Add(BitConverter.Int64BitsToDouble(BitConverter.DoubleToInt64Bits((hundredths + 0.5) / 100)
                + random.Next(-3, 4)));
            values.Add(random.Next(0, 2000) + random.Next(0, 4) * 0.25);
        }
        var wrong = values.Where(v => new SvgCoordinate(v).ToString() != v.ToString("0.##", Inv))
            .Select(v => $"{v:R}: {new SvgCoordinate(v)} vs {v.ToString("0.##", Inv)}").Take(5).ToList();
        Assert.Empty(wrong);
    }

    [Fact]
    public void Times_match_the_custom_format_on_random_and_edge_values()
    {
        var random = new Random(11302026);
        var values = new List<long> { 0, 1, 499, 500, 501, 999, 1000, 1499, 1500, 49, 50, 51, 99, 100, 150, 250,
            999_999_999_999_999, 1_000_000_000_000_000, long.MaxValue, -1, -500, -1500, long.MinValue };
        for (var i = 0; i < 1_000_000; i++)
        {
            values.Add(random.NextInt64(0, 20_000_000_000));
            values.Add(random.NextInt64(0, 1_000_000_000_000_000));
            values.Add(random.NextInt64(0, 20_000_000) * 50);
        }
        var wrong = new List<string>();
        foreach (var ns in values)
        {
            var ms = (ns / 1e6).ToString("0.000", Inv);
            var us = (ns / 1e3).ToString("0.0", Inv);
            if (SvgFixed.Milliseconds(ns).ToString() != ms) wrong.Add($"{ns} ns: {SvgFixed.Milliseconds(ns)} vs {ms}");
            if (SvgFixed.Microseconds(ns).ToString() != us) wrong.Add($"{ns} ns: {SvgFixed.Microseconds(ns)} vs {us}");
        }
        Assert.Empty(wrong.Take(5));
    }

    [Fact]
    public void Formats_into_interpolated_text_without_a_format()
    {
        var text = $"x=\"{new SvgCoordinate(612.3456)}\" t={SvgFixed.Milliseconds(2_816_123_456)} ms "
            + $"({SvgFixed.Microseconds(333_049)} µs)";
        Assert.Equal("x=\"612.35\" t=2816.123 ms (333.0 µs)", text);
        Span<char> tooShort = stackalloc char[3];
        Assert.False(new SvgCoordinate(612.3456).TryFormat(tooShort, out _, default, null));
    }
}
