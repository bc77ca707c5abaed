using System.IO.MemoryMappedFiles;
using Microsoft.Win32.SafeHandles;
using TraceLab.Core;

namespace TraceLab.Formats.TraceDat;

/// <summary>
/// The event data of a trace.dat for the per-CPU cursors, a window of whole pages at a time, read into a pinned buffer
/// per cursor that each window reuses; mapped from the file only when asked (tests compare the two). Mapping once
/// looked cheaper (no kernel copy of every byte, ~12 % of reading on the host measured then), but a mapped window is a
/// view mapped and unmapped per move, each page a fault: on the virtual machines we measure on, reading the busy
/// trace.dat took 73–75 ns/event mapped against 35–36 read (`tracelab bench`, JIT; docs/performance.md#read-window).
/// Either way at most one window per CPU stream is held, so memory stays bounded: mapped windows shrink as streams
/// grow in number, keeping their total near 16 MiB; read ones are 64 KiB each.
/// </summary>
internal sealed unsafe class TraceDatData : IDisposable
{
    private const int ReadWindowBytes = 1 << 16;
    private const int MaxMappedWindowBytes = 1 << 20;
    private const int MappedBytesForAllStreams = 16 << 20;

    private readonly SafeFileHandle _handle;
    private readonly string _file;
    private readonly MemoryMappedFile? _map;
    private readonly long _mappedLength;

    private TraceDatData(SafeFileHandle handle, string file, MemoryMappedFile? map, long mappedLength, int windowBytes)
    {
        _handle = handle;
        _file = file;
        _map = map;
        _mappedLength = mappedLength;
        WindowBytes = windowBytes;
    }

    /// <summary>
    /// About how many bytes a cursor's window holds (rounded down to whole pages, at least one page).
    /// </summary>
    public int WindowBytes { get; }

    /// <summary>True when windows are views of the mapped file.</summary>
    public bool IsMapped => _map is not null;

    /// <param name="map">True maps windows from the file where that works (tests compare the two); by default they are
    /// read.</param>
    public static TraceDatData Open(SafeFileHandle handle, string file, int streams, bool map = false)
    {
        var length = RandomAccess.GetLength(handle);
        if (map && length > 0)
        {
            try
            {
                var mapped = MemoryMappedFile.CreateFromFile(
                    handle, null, 0, MemoryMappedFileAccess.Read, HandleInheritability.None, leaveOpen: true);
                var window =
                    Math.Clamp(MappedBytesForAllStreams / Math.Max(1, streams), ReadWindowBytes, MaxMappedWindowBytes);
                return new TraceDatData(handle, file, mapped, length, window);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException or NotSupportedException)
            {
                // A file system that cannot map: positional reads give the same bytes.
            }
        }

        return new TraceDatData(handle, file, null, 0, ReadWindowBytes);
    }

    /// <summary>
    /// The bytes [offset, offset + length) of CPU <paramref name="cpu"/>'s data, which runs to <paramref name="end"/>.
    /// <paramref name="previous"/> (the cursor's last window) is released, or reused when it is a buffer.
    /// </summary>
    /// <exception cref="TraceFormatException">The file ends before offset + length.</exception>
    public Window Load(Window? previous, long offset, int length, int cpu, long end)
    {
        if (_map is not null)
        {
            previous?.Dispose();
            if (offset + length > _mappedLength)
                throw new TraceFormatException(_file, Math.Max(offset, _mappedLength),
                    $"CPU {cpu} data continuing to offset {end}, but the file ended");
            return new MappedWindow(new MappedFileView(_map, offset, length));
        }

        var buffer = previous as BufferWindow;
        if (buffer is null || buffer.Capacity < length)
        {
            previous?.Dispose();
            buffer = new BufferWindow(length);
        }

        buffer.Fill(_handle, _file, offset, length, cpu, end);
        return buffer;
    }

    public void Dispose() => _map?.Dispose();

    /// <summary>A stretch of file bytes at a fixed address until disposed.</summary>
    internal abstract class Window : IDisposable
    {
        public byte* Pointer { get; protected set; }

        public abstract void Dispose();
    }

    private sealed class MappedWindow : Window
    {
        private readonly MappedFileView _view;

        public MappedWindow(MappedFileView view)
        {
            _view = view;
            Pointer = view.Pointer;
        }

        public override void Dispose()
        {
            _view.Dispose();
            Pointer = null;
        }
    }

    private sealed class BufferWindow : Window
    {
        private readonly byte[] _buffer;

        public BufferWindow(int capacity)
        {
            // Pinned for its lifetime (the pinned object heap), so the pointer stays valid.
            _buffer = GC.AllocateUninitializedArray<byte>(capacity, pinned: true);
            fixed (byte* p = _buffer) Pointer = p;
        }

        public int Capacity => _buffer.Length;

        public void Fill(SafeFileHandle handle, string file, long offset, int length, int cpu, long end)
        {
            var done = 0;
            while (done < length)
            {
                var n = RandomAccess.Read(handle, _buffer.AsSpan(done, length - done), offset + done);
                if (n <= 0) throw new TraceFormatException(
                    file, offset + done, $"CPU {cpu} data continuing to offset {end}, but the file ended");
                done += n;
            }
        }

        public override void Dispose() { }
    }
}
