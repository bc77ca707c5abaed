using System.Runtime.InteropServices;

namespace TraceLab.Formats;

/// <summary>
/// Linux transparent huge pages asked for on a range of memory (madvise MADV_HUGEPAGE): new memory written in 2 MiB
/// pages takes 1/512 of the page faults, which on the virtual machines we measure on cost ~11 µs each
/// (docs/performance.md#huge-page-heap). The managed heap's range and the readers' buffers use it.
/// </summary>
public static unsafe partial class TransparentHugePages
{
    /// <summary>MADV_HUGEPAGE.</summary>
    private const int AdviseHugePage = 14;

    private const string ModeFile = "/sys/kernel/mm/transparent_hugepage/enabled";

    /// <summary>
    /// True where the system gives huge pages only to memory that asks ("always [madvise] never": the madvise mode,
    /// Debian's default): there, and only there, advice changes something ("always" gives them unasked, "never"
    /// never).
    /// </summary>
    public static bool GivenOnRequest()
    {
        if (!OperatingSystem.IsLinux()) return false;
        try
        {
            return File.ReadAllText(ModeFile).Contains("[madvise]", StringComparison.Ordinal);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return false;
        }
    }

    /// <summary>
    /// Asks for huge pages on [<paramref name="start"/>, +<paramref name="length"/>) (page-aligned start); false where
    /// that is not Linux or the kernel refused (the memory then stays in 4 KiB pages: the same bytes, more faults).
    /// </summary>
    public static bool Advise(void* start, nuint length) =>
        OperatingSystem.IsLinux() && Madvise(start, length, AdviseHugePage) == 0;

    /// <summary>
    /// Makes [<paramref name="start"/>, +<paramref name="length"/>) of a reservation readable and writable in one
    /// call (mprotect), so that it is one mapping before anything is written in it: Linux gives a huge page to a fault
    /// only where the mapping covers the whole aligned 2 MiB, and memory committed in small steps (as the collector
    /// commits its regions) never does at its growing end. Nothing is allocated: pages come on first write. False
    /// where that is not Linux or the kernel refused (strict overcommit accounting, for one).
    /// </summary>
    public static bool MakeWritable(void* start, nuint length) =>
        OperatingSystem.IsLinux() && Mprotect(start, length, ProtectRead | ProtectWrite) == 0
        && Madvise(start, length, AdviseDump) == 0;

    private const int ProtectRead = 1, ProtectWrite = 2;
    private const int MapPrivate = 0x02, MapAnonymous = 0x20;

    /// <summary>
    /// <paramref name="length"/> bytes of new, readable and writable anonymous memory (mmap: never memory the process
    /// used before, as the allocator's may be); null where that is not Linux or it was refused. Give it back with
    /// <see cref="Unmap"/>.
    /// </summary>
    public static void* MapNew(nuint length)
    {
        if (!OperatingSystem.IsLinux()) return null;
        var mapped = Mmap(null, length, ProtectRead | ProtectWrite, MapPrivate | MapAnonymous, -1, 0);
        return mapped == (void*)-1 ? null : mapped;
    }

    /// <summary>Gives back memory from <see cref="MapNew"/>.</summary>
    public static void Unmap(void* start, nuint length) => _ = Munmap(start, length);

    [LibraryImport("libc", EntryPoint = "mmap")]
    private static partial void* Mmap(void* address, nuint length, int protection, int flags, int fd, nint offset);

    [LibraryImport("libc", EntryPoint = "munmap")]
    private static partial int Munmap(void* address, nuint length);

    /// <summary>MADV_DODUMP.</summary>
    private const int AdviseDump = 17;

    [LibraryImport("libc", EntryPoint = "mprotect")]
    private static partial int Mprotect(void* start, nuint length, int protection);

    [LibraryImport("libc", EntryPoint = "madvise")]
    private static partial int Madvise(void* start, nuint length, int advice);
}
