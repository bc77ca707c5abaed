using System.IO.MemoryMappedFiles;

namespace TraceLab.Formats;

/// <summary>
/// Part of a memory-mapped file at a fixed address until disposed: the trace readers read records straight from the
/// page cache through it, without copying them into a buffer first.
/// </summary>
internal sealed unsafe class MappedFileView : IDisposable
{
    private MemoryMappedViewAccessor? _view;

    public MappedFileView(MemoryMappedFile file, long offset, long length)
    {
        _view = file.CreateViewAccessor(offset, length, MemoryMappedFileAccess.Read);
        byte* p = null;
        _view.SafeMemoryMappedViewHandle.AcquirePointer(ref p);
        // Views start at an allocation-granularity boundary; PointerOffset is where the requested offset lies.
        Start = p;
        Pointer = p + _view.PointerOffset;
    }

    /// <summary>Where the view begins: a page boundary at or before <see cref="Pointer"/>.</summary>
    public byte* Start { get; private set; }

    /// <summary>The byte at the requested offset; null once disposed.</summary>
    public byte* Pointer { get; private set; }

    public void Dispose()
    {
        if (_view is null) return;
        _view.SafeMemoryMappedViewHandle.ReleasePointer();
        _view.Dispose();
        _view = null;
        Pointer = Start = null;
    }
}
