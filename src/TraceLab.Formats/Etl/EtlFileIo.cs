using Microsoft.Win32.SafeHandles;

namespace TraceLab.Formats.Etl;

/// <summary>Positioned reads that fill the whole span (RandomAccess.Read may return less than asked).</summary>
internal static class EtlFileIo
{
    /// <summary>Fills <paramref name="into"/>; the caller has checked the bytes exist, so a short file is an I/O
    /// error.</summary>
    public static void ReadExactly(SafeFileHandle file, Span<byte> into, long offset)
    {
        while (!into.IsEmpty)
        {
            var n = RandomAccess.Read(file, into, offset);
            if (n <= 0)
                throw new IOException($"the file ended at offset {offset} while reading it (truncated meanwhile?)");
            into = into[n..];
            offset += n;
        }
    }
}
