using System.Buffers.Binary;

namespace TraceLab.Formats.Tests.Etl;

/// <summary>
/// A small MS-XCA Plain LZ77 compressor written from the format's description (greedy, 3-byte hash, 8 KiB
/// window), so tests can build compressed .etl buffers. It uses every length encoding: 3 bits, the shared half
/// byte, a byte, a u16 and a u32.
/// </summary>
internal static class XpressTestCompressor
{
    private const int MaxDistance = 8192;
    private const int MinMatch = 3;

    public static byte[] Compress(ReadOnlySpan<byte> input)
    {
        var output = new List<byte>(input.Length + input.Length / 8 + 16);
        var table = new Dictionary<int, int>();
        var flagAt = Reserve(output, 4);
        uint flags = 0;
        var flagCount = 0;
        var halfByteAt = -1;
        var i = 0;
        while (i < input.Length)
        {
            var (distance, length) = FindMatch(input, i, table);
            if (length >= MinMatch)
            {
                WriteMatch(output, distance, length, ref halfByteAt);
                flags = (flags << 1) | 1;
                for (var k = 0; k < length; k++, i++) Remember(input, i, table);
            }
            else
            {
                output.Add(input[i]);
                flags <<= 1;
                Remember(input, i, table);
                i++;
            }

            if (++flagCount == 32)
            {
                WriteU32(output, flagAt, flags);
                flagAt = Reserve(output, 4);
                flags = 0;
                flagCount = 0;
            }
        }

        // Unused flag bits are 1: a decoder then finds a match with no input left and stops.
        flags = (flags << (32 - flagCount)) | (uint)((1L << (32 - flagCount)) - 1);
        WriteU32(output, flagAt, flags);
        return [.. output];
    }

    private static (int Distance, int Length) FindMatch(ReadOnlySpan<byte> input, int i, Dictionary<int, int> table)
    {
        if (input.Length - i < MinMatch || !table.TryGetValue(Key(input, i), out var candidate)) return (0, 0);
        var distance = i - candidate;
        if (distance is < 1 or > MaxDistance) return (0, 0);
        var length = 0;
        while (i + length < input.Length && input[candidate + length] == input[i + length]) length++;
        return (distance, length);
    }

    private static void Remember(ReadOnlySpan<byte> input, int i, Dictionary<int, int> table)
    {
        if (input.Length - i >= MinMatch) table[Key(input, i)] = i;
    }

    private static int Key(ReadOnlySpan<byte> input, int i) => input[i] | input[i + 1] << 8 | input[i + 2] << 16;

    private static void WriteMatch(List<byte> output, int distance, int length, ref int halfByteAt)
    {
        var m = length - MinMatch;
        var meta = (distance - 1) << 3;
        if (m < 7)
        {
            WriteU16(output, meta | m);
            return;
        }

        WriteU16(output, meta | 7);
        m -= 7;
        var nibble = Math.Min(m, 15);
        if (halfByteAt < 0)
        {
            halfByteAt = output.Count;
            output.Add((byte)nibble);
        }
        else
        {
            output[halfByteAt] |= (byte)(nibble << 4);
            halfByteAt = -1;
        }

        if (m < 15) return;
        m -= 15;
        if (m < 255)
        {
            output.Add((byte)m);
            return;
        }

        output.Add(255);
        var total = length - MinMatch;
        if (total <= 0xFFFF)
        {
            WriteU16(output, total);
            return;
        }

        WriteU16(output, 0);
        var b = new byte[4];
        BinaryPrimitives.WriteUInt32LittleEndian(b, (uint)total);
        output.AddRange(b);
    }

    private static int Reserve(List<byte> output, int n)
    {
        var at = output.Count;
        for (var k = 0; k < n; k++) output.Add(0);
        return at;
    }

    private static void WriteU16(List<byte> output, int v)
    {
        output.Add((byte)v);
        output.Add((byte)(v >> 8));
    }

    private static void WriteU32(List<byte> output, int at, uint v)
    {
        for (var k = 0; k < 4; k++) output[at + k] = (byte)(v >> (8 * k));
    }
}
