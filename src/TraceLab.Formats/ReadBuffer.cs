using System.Runtime.InteropServices;

namespace TraceLab.Formats;

/// <summary>
/// A buffer outside the managed heap that a reader fills with read(2) and reuses: docs/performance.md#read-window.
/// In 4 KiB pages unless <see cref="ReadBuffers.HugePages"/>; kept for the next read while a
/// <see cref="ReadBuffers.KeepBetweenReads"/> scope is open.
/// </summary>
/// <remarks>
/// Reading a file through a mapping costs a page fault per 16 pages and giving the pages back as the read goes on; on
/// the virtual machines we measure on, touching every cache line of a 150 MB perf.data took 115 ms mapped (faults and
/// MADV_DONTNEED as the window moved) against 41–51 ms read into one reused buffer. The buffer's own pages are new
/// once; where free memory goes back to the host, huge ones can cost 20 times what 4 KiB ones do
/// (docs/performance.md#window-steps).
/// </remarks>
internal sealed unsafe class ReadBuffer : IDisposable
{
    private const nuint HugePage = 2 << 20;

    private ReadBuffer(int length, bool hugePages)
    {
        Length = length;
        HugePages = hugePages;
        // Aligned to a huge page, so that every whole 2 MiB of it can be one.
        Pointer = (byte*)NativeMemory.AlignedAlloc((nuint)Math.Max(1, length), HugePage);
        if (hugePages && length >= (int)HugePage) TransparentHugePages.Advise(Pointer, (nuint)length);
    }

    /// <summary>A buffer of <paramref name="length"/> bytes: the one a finished read kept, when it fits, else new.
    /// </summary>
    public static ReadBuffer Rent(int length)
    {
        var hugePages = ReadBuffers.HugePages;
        if (ReadBuffers.TakeKept() is { } kept)
        {
            if (kept.Length == length && kept.HugePages == hugePages) return kept;
            kept.Free();
        }
        return new ReadBuffer(length, hugePages);
    }

    public byte* Pointer { get; private set; }

    public int Length { get; }

    /// <summary>Whether the buffer asked for huge pages.</summary>
    private bool HugePages { get; }

    /// <summary>Done with: kept for the next read inside a <see cref="ReadBuffers.KeepBetweenReads"/> scope, else
    /// freed.</summary>
    public void Dispose()
    {
        if (Pointer is null) return;
        if (!ReadBuffers.Keep(this)) Free();
    }

    internal void Free()
    {
        if (Pointer is null) return;
        NativeMemory.AlignedFree(Pointer);
        Pointer = null;
    }
}
