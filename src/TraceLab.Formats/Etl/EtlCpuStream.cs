using System.Globalization;
using Microsoft.Win32.SafeHandles;
using TraceLab.Core;

namespace TraceLab.Formats.Etl;

/// <summary>
/// The events one CPU logged, buffer after buffer in fill order: holds one buffer's event bytes at a time
/// (decompressed when the buffer is), and steps through its records. Time stamps that go back within the CPU
/// (only damage does that) are raised to the previous one, so the k-way merge stays ordered.
/// </summary>
internal sealed class EtlCpuStream(
    SafeFileHandle file, string path, int cpu, EtlBufferEntry[] buffers, EtlClock clock, bool salvage, byte[] scratch)
{
    private readonly SafeFileHandle _file = file;
    private readonly string _path = path;
    private readonly EtlBufferEntry[] _buffers = buffers;
    private readonly EtlClock _clock = clock;
    private readonly bool _salvage = salvage;
    private readonly byte[] _scratch = scratch;
    private byte[] _data = [];
    private int _length;
    private int _next;
    private int _pos;
    private int _stride;
    private long _bufferOffset;
    private bool _compressed;

    public int Cpu { get; } = cpu;

    /// <summary>The current event (valid after <see cref="MoveNext"/> returned true).</summary>
    public EtlEventRecord Current;

    /// <summary>The current event's time in nanoseconds since the session start.</summary>
    public long Timestamp { get; private set; } = long.MinValue;

    /// <summary>The current buffer's event bytes; the current record starts at <see cref="Position"/>.</summary>
    public ReadOnlySpan<byte> Data => _data.AsSpan(0, _length);
    public int Position => _pos;

    public ReadOnlySpan<byte> Payload => _data.AsSpan(_pos + Current.PayloadOffset, Current.PayloadLength);

    /// <summary>File offset of the current record (or of its buffer, for a compressed one).</summary>
    public long FileOffset => _compressed ? _bufferOffset : _bufferOffset + EtlBufferHeader.Size + _pos;

    public long TimeWentBack { get; private set; }
    public long SkippedBytes { get; private set; }
    public long UnknownHeaders { get; private set; }
    public string? Damage { get; private set; }

    public bool MoveNext()
    {
        _pos += _stride;
        _stride = 0;
        while (true)
        {
            switch (EtlEventParser.Next(_data.AsSpan(0, _length), _pos, ref Current))
            {
                case EtlParseResult.Event:
                    _stride = Current.Stride;
                    SetTimestamp();
                    return true;
                case EtlParseResult.Damaged:
                    Damaged(
                        $"an event record (a 0xC0 marker and a size within the buffer) at byte {_pos} of its events",
                        _length - _pos);
                    break;
            }

            if (!LoadNextBuffer()) return false;
        }
    }

    private void SetTimestamp()
    {
        // WPP messages and unknown kinds carry no time stamp where this reader looks: they inherit the previous one.
        if (Current.Kind is EtlHeaderKind.Message or EtlHeaderKind.Unknown)
        {
            if (Current.Kind == EtlHeaderKind.Unknown) UnknownHeaders++;
            if (Timestamp == long.MinValue) Timestamp = 0;
            return;
        }

        var ns = _clock.ToNanoseconds(Current.RawTimestamp);
        if (ns < Timestamp && Timestamp != long.MinValue)
        {
            TimeWentBack++;
            return;
        }

        Timestamp = ns;
    }

    private bool LoadNextBuffer()
    {
        while (_next < _buffers.Length)
        {
            var entry = _buffers[_next++];
            var h = entry.Header;
            _bufferOffset = entry.FileOffset;
            _compressed = h.IsCompressed;
            _pos = 0;
            _stride = 0;
            if (_data.Length < h.EventBytes)
            {
                var grown = Math.Max(h.EventBytes, Math.Min(_data.Length * 2, EtlBufferIndex.MaxBufferSize));
                _data = GC.AllocateUninitializedArray<byte>(grown);
            }

            if (!_compressed)
            {
                EtlFileIo.ReadExactly(_file, _data.AsSpan(0, h.EventBytes), entry.FileOffset + EtlBufferHeader.Size);
                _length = h.EventBytes;
                return true;
            }

            var packed = _scratch.AsSpan(0, h.BufferSize - EtlBufferHeader.Size);
            EtlFileIo.ReadExactly(_file, packed, entry.FileOffset + EtlBufferHeader.Size);
            var n = XpressLz77.Decompress(packed, _data.AsSpan(0, h.EventBytes));
            if (n == h.EventBytes)
            {
                _length = n;
                return true;
            }

            _length = 0;
            var got = n < 0 ? "invalid data" : n.ToString(CultureInfo.InvariantCulture) + " bytes";
            var expected = string.Create(CultureInfo.InvariantCulture,
                $"a compressed buffer (MS-XCA LZ77) that decompresses to {h.EventBytes} bytes, got {got}");
            Damaged(expected, h.EventBytes);
        }

        _length = 0;
        return false;
    }

    /// <summary>Strict: fails with the file offset. Salvage: skips the rest of this buffer and notes it once.</summary>
    private void Damaged(string expected, long skipped)
    {
        var at = FileOffset;
        if (!_salvage) throw new TraceFormatException(_path, at, expected);
        SkippedBytes += Math.Max(0, skipped);
        Damage ??= string.Create(CultureInfo.InvariantCulture,
            $"CPU {Cpu}: buffer at offset {_bufferOffset}: expected {expected}");
        _length = 0;
    }
}
