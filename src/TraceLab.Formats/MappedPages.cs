using System.Runtime.InteropServices;

namespace TraceLab.Formats;

/// <summary>
/// Linux madvise(2) on a mapping of a file: drops the page-table entries of a range already read, so a mapping of the
/// whole file keeps resident only the pages between the range given back and the reader. Re-reading a dropped page
/// maps it again from the page cache (or the file): the mapping stays valid.
/// </summary>
internal static unsafe partial class MappedPages
{
    /// <summary>MADV_DONTNEED.</summary>
    private const int DontNeed = 4;

    /// <summary>
    /// True where ranges can be given back (Linux); elsewhere the readers map windows of the file instead.
    /// </summary>
    public static bool CanRelease => OperatingSystem.IsLinux();

    public static long PageSize { get; } = Environment.SystemPageSize;

    /// <summary>Drops the pages of [<paramref name="start"/>, +<paramref name="length"/>).</summary>
    /// <param name="start">A page-aligned address inside a file mapping.</param>
    public static void Release(byte* start, long length)
    {
        if (length <= 0) return;
        // A failure (none is expected for a valid mapping) leaves the pages resident: more memory, same results.
        _ = Madvise(start, (nuint)length, DontNeed);
    }

    [LibraryImport("libc", EntryPoint = "madvise")]
    private static partial int Madvise(void* start, nuint length, int advice);
}
