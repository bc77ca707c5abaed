using TraceLab.Formats.Etl;

namespace TraceLab.Formats.Tests.Etl;

public sealed class XpressLz77Tests
{
    private static byte[] Hex(string s) => Convert.FromHexString(s.Replace(" ", "", StringComparison.Ordinal));

    [Fact]
    public void Decodes_the_specification_examples()
    {
        // MS-XCA §3.1: 26 literals, then the unused flag bits set.
        var alphabet = "abcdefghijklmnopqrstuvwxyz"u8.ToArray();
        var output = new byte[26];
        Assert.Equal(26, XpressLz77.Decompress(Hex("3f000000").Concat(alphabet).ToArray(), output));
        Assert.Equal(alphabet, output);

        // MS-XCA §3.1: "abc" × 100 as three literals and one 297-byte match (half byte 15, byte 255, u16 294).
        var repeated = new byte[300];
        Assert.Equal(300, XpressLz77.Decompress(Hex("ffffff1f 616263 1700 0f ff 2601"), repeated));
        Assert.Equal(string.Concat(Enumerable.Repeat("abc", 100)), System.Text.Encoding.ASCII.GetString(repeated));
    }

    [Theory]
    [InlineData(0, 1)]
    [InlineData(100, 2)]
    [InlineData(5000, 3)]
    [InlineData(70_000, 4)]
    [InlineData(300_000, 5)]
    public void Round_trips_the_test_compressor_over_every_length_encoding(int length, int seed)
    {
        var rng = new Random(seed);
        var input = new byte[length];
        // Runs of repeats of varied length (short, half byte, byte, u16, u32 encodings) between random bytes.
        for (var i = 0; i < length;)
        {
            var run = rng.Next(4) switch
            {
                0 => rng.Next(1, 10),
                1 => rng.Next(10, 40),
                2 => rng.Next(40, 600),
                _ => rng.Next(600, 80_000)
            };
            var value = (byte)rng.Next(4);
            for (var k = 0; k < run && i < length; k++, i++) input[i] = rng.Next(8) == 0 ? (byte)rng.Next(256) : value;
        }

        var packed = XpressTestCompressor.Compress(input);
        var output = new byte[length];
        Assert.Equal(length, XpressLz77.Decompress(packed, output));
        Assert.Equal(input, output);
    }

    [Fact]
    public void Damaged_input_never_throws_nor_writes_out_of_bounds()
    {
        var rng = new Random(7);
        var input = new byte[4000];
        for (var i = 0; i < input.Length; i++) input[i] = (byte)(i % 97 < 50 ? i % 7 : rng.Next(256));
        var packed = XpressTestCompressor.Compress(input);
        var output = new byte[input.Length];
        var failures = 0;
        for (var c = 0; c < 5000; c++)
        {
            var damaged = (byte[])packed.Clone();
            for (var k = 0; k < 1 + c % 4; k++) damaged[rng.Next(damaged.Length)] = (byte)rng.Next(256);
            var cut = damaged.AsSpan(0, rng.Next(damaged.Length + 1));
            var n = XpressLz77.Decompress(cut, output);
            Assert.InRange(n, -1, output.Length);
            if (n != output.Length) failures++;
        }

        Assert.True(failures > 0);
    }
}
