using System.Runtime.InteropServices;

namespace TraceLab.Formats;

/// <summary>
/// A buffer outside the managed heap that a reader fills with read(2) and reuses, on Linux in transparent huge pages
/// where the system gives them on request: docs/performance.md#read-window.
/// </summary>
/// <remarks>
/// Reading a file through a mapping costs a page fault per 16 pages and giving the pages back as the read goes on; on
/// the virtual machines we measure on, touching every cache line of a 150 MB perf.data took 115 ms mapped (faults and
/// MADV_DONTNEED as the window moved) against 41–51 ms read into one reused buffer. The buffer's own pages are new
/// once: in 2 MiB pages that is a handful of faults.
/// </remarks>
internal sealed unsafe class ReadBuffer : IDisposable
{
    private const nuint HugePage = 2 << 20;

    public ReadBuffer(int length)
    {
        Length = length;
        // Aligned to a huge page, so that every whole 2 MiB of it can be one.
        Pointer = (byte*)NativeMemory.AlignedAlloc((nuint)Math.Max(1, length), HugePage);
        if (length >= (int)HugePage) TransparentHugePages.Advise(Pointer, (nuint)length);
    }

    public byte* Pointer { get; private set; }

    public int Length { get; }

    public void Dispose()
    {
        if (Pointer is null) return;
        NativeMemory.AlignedFree(Pointer);
        Pointer = null;
    }
}
