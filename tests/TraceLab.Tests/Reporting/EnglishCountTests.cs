using TraceLab.Reporting;

namespace TraceLab.Tests.Reporting;

/// <summary>Counts in findings' titles and report.html read as English whatever the count.</summary>
public sealed class EnglishCountTests
{
    [Theory]
    [InlineData(0, "0 episodes")]
    [InlineData(1, "1 episode")]
    [InlineData(2, "2 episodes")]
    [InlineData(303_122, "303,122 episodes")]
    public void A_noun_is_plural_unless_the_count_is_one(long n, string expected) =>
        Assert.Equal(expected, EnglishCount.Of(n, "episode"));

    [Fact]
    public void An_irregular_plural_is_given()
    {
        Assert.Equal("1 process", EnglishCount.Of(1, "process", "processes"));
        Assert.Equal("2 processes", EnglishCount.Of(2, "process", "processes"));
    }

    [Theory]
    [InlineData(1, "once")]
    [InlineData(2, "2 times")]
    [InlineData(1_000, "1,000 times")]
    public void Times_says_once(long n, string expected) => Assert.Equal(expected, EnglishCount.Times(n));
}
