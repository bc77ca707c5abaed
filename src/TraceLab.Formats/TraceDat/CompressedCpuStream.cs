using System.Buffers.Binary;
using Microsoft.Win32.SafeHandles;
using TraceLab.Core;

namespace TraceLab.Formats.TraceDat;

/// <summary>
/// One CPU's compressed v7 data, decompressed a chunk at a time: a 4-byte chunk count, then per chunk its compressed
/// size (4), decompressed size (4, whole trace pages; trace-cmd writes 10 pages) and the compressed bytes. Only the
/// current chunk is held, so memory stays bounded by the chunk size whatever the stream's length.
/// </summary>
internal sealed unsafe class CompressedCpuStream : IDisposable
{
    /// <summary>Largest decompressed chunk accepted: trace-cmd writes 10 pages (40 KiB with 4 KiB pages).</summary>
    public const int MaxChunkBytes = 4 << 20;

    private readonly SafeFileHandle _handle;
    private readonly string _file;
    private readonly ChunkCodec _codec;
    private readonly ChunkScratch _scratch;
    private readonly int _cpu;
    private readonly long _end;
    private long _next;
    private long _chunksLeft = -1;
    private byte[]? _plain;
    private byte* _plainPointer;

    public CompressedCpuStream(SafeFileHandle handle, string file, ChunkCodec codec, ChunkScratch scratch,
        CpuDataRange range)
    {
        _handle = handle;
        _file = file;
        _codec = codec;
        _scratch = scratch;
        _cpu = range.Cpu;
        _next = range.Offset;
        // trace-cmd 3.2 counts the 4-byte chunk count in the BUFFER option's size, 3.1 does not (its readers follow
        // the chunk count, not the size); both are accepted.
        _end = range.Offset + range.Size + 4;
    }

    /// <summary>
    /// File offset of the current chunk's header (what errors inside its decompressed pages point at).
    /// </summary>
    public long ChunkOffset { get; private set; }

    /// <summary>Decompresses the next chunk; false at the end of the stream.</summary>
    /// <exception cref="TraceFormatException">
    /// A chunk header or compressed data that is truncated or corrupt.
    /// </exception>
    public bool TryNext(out byte* data, out int length)
    {
        data = null;
        length = 0;
        Span<byte> header = stackalloc byte[8];
        if (_chunksLeft < 0)
        {
            ReadAt(_next, header[..4], "the chunk count");
            _chunksLeft = BinaryPrimitives.ReadUInt32LittleEndian(header);
            _next += 4;
        }

        if (_chunksLeft == 0) return false;
        ChunkOffset = _next;
        ReadAt(_next, header, "a chunk header");
        var compressedSize = BinaryPrimitives.ReadUInt32LittleEndian(header);
        var plainSize = BinaryPrimitives.ReadUInt32LittleEndian(header[4..]);
        _next += 8;
        if (compressedSize > _end - _next)
            throw Fail($"a compressed chunk of at most {_end - _next} bytes (the rest of the CPU data), " +
                $"found {compressedSize}");
        if (plainSize is 0 or > MaxChunkBytes)
            throw Fail($"a chunk decompressing to 1..{MaxChunkBytes} bytes, found {plainSize}");
        // Incompressible data grows by a few bytes per block at most; anything larger is corrupt.
        if (compressedSize > plainSize + (plainSize >> 4) + 1024)
            throw Fail($"a compressed chunk no larger than its {plainSize} decompressed bytes, found {compressedSize}");

        var compressed = _scratch.Rent((int)compressedSize);
        ReadAt(_next, compressed.AsSpan(0, (int)compressedSize), "compressed chunk data");
        _next += compressedSize;
        EnsurePlain((int)plainSize);
        _codec.Decompress(compressed.AsSpan(0, (int)compressedSize), _plain.AsSpan(0, (int)plainSize), _file,
            ChunkOffset,
            $"CPU {_cpu} data chunk");
        _chunksLeft--;
        data = _plainPointer;
        length = (int)plainSize;
        return true;
    }

    public void Dispose()
    {
        if (_plain is not null) _scratch.Release(_plain.Length);
        _plain = null;
        _plainPointer = null;
    }

    private void EnsurePlain(int size)
    {
        if (_plain is not null && _plain.Length >= size) return;
        _scratch.Reserve(size - (_plain?.Length ?? 0), _file, ChunkOffset);
        // Pinned (the pinned object heap) so the cursor can keep a pointer into it.
        _plain = GC.AllocateUninitializedArray<byte>(size, pinned: true);
        fixed (byte* p = _plain) _plainPointer = p;
    }

    private void ReadAt(long offset, Span<byte> target, string what)
    {
        if (target.Length > _end - offset) throw Fail($"{what} within CPU {_cpu} data ending at offset {_end}");
        var done = 0;
        while (done < target.Length)
        {
            var n = RandomAccess.Read(_handle, target[done..], offset + done);
            if (n <= 0) throw new TraceFormatException(_file, offset + done,
                $"CPU {_cpu} data continuing to offset {_end}, but the file ended");
            done += n;
        }
    }

    private TraceFormatException Fail(string expected) => new(_file, ChunkOffset > 0 ? ChunkOffset : _next, expected);
}

/// <summary>
/// One buffer for compressed chunk bytes, shared by a reader's streams (they decompress one at a time), and the budget
/// for their decompressed chunks together: every stream holds one chunk, so a file with thousands of CPU streams
/// declaring huge chunks is refused before it allocates them.
/// </summary>
internal sealed class ChunkScratch
{
    /// <summary>
    /// Decompressed chunks held at once, all streams together (4096 CPUs of 10-page chunks is 160 MiB).
    /// </summary>
    public const long MaxHeldBytes = 256L << 20;

    private byte[] _buffer = Array.Empty<byte>();
    private long _held;

    public void Reserve(long bytes, string file, long at)
    {
        if (_held + bytes > MaxHeldBytes)
            throw new TraceFormatException(file, at,
                $"decompressed chunks of at most {MaxHeldBytes} bytes for all CPUs together, found more");
        _held += bytes;
    }

    public void Release(long bytes) => _held -= bytes;

    public byte[] Rent(int size)
    {
        if (_buffer.Length < size) _buffer = new byte[Math.Max(size, Math.Min(2 * _buffer.Length,
            CompressedCpuStream.MaxChunkBytes))];
        return _buffer;
    }
}
