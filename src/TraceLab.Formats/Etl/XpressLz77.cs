using System.Buffers.Binary;
using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace TraceLab.Formats.Etl;

/// <summary>
/// Decompresses MS-XCA "Plain LZ77" (COMPRESSION_FORMAT_XPRESS, the format Windows uses for compressed .etl
/// buffers): 32-bit flag words, one bit per item, 0 = literal byte, 1 = a 16-bit match (13-bit distance - 1, 3-bit
/// length - 3) whose length may continue in a shared half byte, a byte, a u16 or a u32. Written from the MS-XCA
/// specification (section 2.4); no allocation, every read and copy bounds-checked, so damaged input fails instead
/// of looping (the 8-byte fast paths run only where both buffers have room checked beforehand).
/// </summary>
public static class XpressLz77
{
    private const int MinMatch = 3;

    /// <summary>
    /// Decompresses <paramref name="input"/> into <paramref name="output"/>, stopping when the output is full or the
    /// input ends. Returns the bytes written, or -1 when the input is damaged (a match reaching before the start of
    /// the output, past its end, or a truncated length).
    /// </summary>
    public static int Decompress(ReadOnlySpan<byte> input, Span<byte> output)
    {
        var inPos = 0;
        var outPos = 0;
        uint flags = 0;
        var flagCount = 0;
        var halfByteAt = -1;
        while (outPos < output.Length)
        {
            if (flagCount == 0)
            {
                if (input.Length - inPos < 4) return outPos;
                flags = BinaryPrimitives.ReadUInt32LittleEndian(input[inPos..]);
                inPos += 4;
                flagCount = 32;
            }

            // A run of 0 bits is a run of literals: copied at once, not byte by byte.
            var literals = Math.Min(BitOperations.LeadingZeroCount(flags << (32 - flagCount)), flagCount);
            if (literals > 0)
            {
                var n = Math.Min(literals, Math.Min(input.Length - inPos, output.Length - outPos));
                CopyLiterals(input, inPos, output, outPos, n);
                inPos += n;
                outPos += n;
                flagCount -= n;
                if (n < literals) return outPos;
                continue;
            }

            flagCount--;
            if (input.Length - inPos < 2) return outPos;
            int matchBytes = BinaryPrimitives.ReadUInt16LittleEndian(input[inPos..]);
            inPos += 2;
            var distance = (matchBytes >> 3) + 1;
            long length = matchBytes & 7;
            if (length == 7)
            {
                if (halfByteAt < 0)
                {
                    if (inPos >= input.Length) return -1;
                    halfByteAt = inPos;
                    length = input[inPos++] & 15;
                }
                else
                {
                    length = input[halfByteAt] >> 4;
                    halfByteAt = -1;
                }

                if (length == 15)
                {
                    if (inPos >= input.Length) return -1;
                    length = input[inPos++];
                    if (length == 255)
                    {
                        if (input.Length - inPos < 2) return -1;
                        length = BinaryPrimitives.ReadUInt16LittleEndian(input[inPos..]);
                        inPos += 2;
                        if (length == 0)
                        {
                            if (input.Length - inPos < 4) return -1;
                            length = BinaryPrimitives.ReadUInt32LittleEndian(input[inPos..]);
                            inPos += 4;
                        }

                        if (length < 15 + 7) return -1;
                        length -= 15 + 7;
                    }

                    length += 15;
                }

                length += 7;
            }

            length += MinMatch;
            if (distance > outPos || length > output.Length - outPos) return -1;
            CopyMatch(output, outPos, distance, (int)length);
            outPos += (int)length;
        }

        return outPos;
    }

    /// <summary>
    /// A match closer than its length repeats a pattern: copied in pattern-sized chunks, each reading only bytes
    /// already final (a distance of 1 is a fill).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void CopyMatch(Span<byte> output, int at, int distance, int length)
    {
        if (distance >= Word && output.Length - at - length >= Word)
        {
            // 8 bytes at a time: each word read lies wholly before the write position, so it is final; the last
            // word may write up to 7 bytes past the match, which the room check allows and later items overwrite.
            ref var o = ref MemoryMarshal.GetReference(output);
            for (var i = 0; i < length; i += Word)
            {
                Unsafe.WriteUnaligned(ref Unsafe.Add(ref o, at + i),
                    Unsafe.ReadUnaligned<ulong>(ref Unsafe.Add(ref o, at + i - distance)));
            }

            return;
        }

        if (distance == 1)
        {
            output.Slice(at, length).Fill(output[at - 1]);
            return;
        }

        while (length > 0)
        {
            var n = Math.Min(distance, length);
            output.Slice(at - distance, n).CopyTo(output.Slice(at, n));
            at += n;
            length -= n;
        }
    }

    private const int Word = 8;

    /// <summary>Short literal runs (most of them) as two 8-byte words when both buffers have room to spare.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void CopyLiterals(ReadOnlySpan<byte> input, int inPos, Span<byte> output, int outPos, int n)
    {
        if (n <= 2 * Word && input.Length - inPos >= 2 * Word && output.Length - outPos >= 2 * Word)
        {
            ref var i = ref Unsafe.Add(ref MemoryMarshal.GetReference(input), inPos);
            ref var o = ref Unsafe.Add(ref MemoryMarshal.GetReference(output), outPos);
            Unsafe.WriteUnaligned(ref o, Unsafe.ReadUnaligned<ulong>(ref i));
            Unsafe.WriteUnaligned(ref Unsafe.Add(ref o, Word),
                Unsafe.ReadUnaligned<ulong>(ref Unsafe.Add(ref i, Word)));
            return;
        }

        input.Slice(inPos, n).CopyTo(output[outPos..]);
    }
}
