using System.Buffers.Binary;
using TraceLab.Core;

namespace TraceLab.Formats.Ftrace;

/// <summary>
/// Decodes one raw ring-buffer page (as read from per_cpu/cpuN/trace_pipe_raw) into (timestamp, payload) records.
/// Every length is checked against the committed area, so a corrupt page throws <see cref="TraceFormatException"/>
/// instead of reading out of bounds, and every step consumes at least 4 bytes, so decoding always terminates.
/// </summary>
public ref struct RingBufferPageReader
{
    /// <summary>Set in the commit word when events were lost before this page.</summary>
    public const ulong MissedEventsFlag = 1UL << 31;
    /// <summary>
    /// Set with <see cref="MissedEventsFlag"/> when the lost count is stored after the committed data.
    /// </summary>
    public const ulong MissedStoredFlag = 1UL << 30;

    private const ulong CommitMask = (1UL << 27) - 1;
    private const int TypePadding = 29;
    private const int TypeTimeExtend = 30;
    private const int TypeTimeStamp = 31;
    private const int TimeShift = 27;
    private const ulong TsMsb = 0xF8UL << 56;

    private readonly ReadOnlySpan<byte> _page;
    private readonly string _file;
    private readonly long _fileOffset;
    private RingBufferPageState _state;

    /// <param name="file">Named in exceptions.</param>
    /// <param name="fileOffset">File offset of the page start, so exceptions point at the corrupt byte.</param>
    public RingBufferPageReader(
        ReadOnlySpan<byte> page, HeaderPageLayout layout, string file = "<page>", long fileOffset = 0)
    {
        _page = page;
        _file = file;
        _fileOffset = fileOffset;
        var header = ReadHeader(page, layout, file, fileOffset);
        PageTimestamp = header.Timestamp;
        CommitLength = header.CommitLength;
        MissedEvents = header.MissedEvents;
        MissedEventsStored = header.MissedStored;
        MissedEventCount = header.MissedCount;
        _state = header.InitialState;
    }

    public ulong PageTimestamp { get; }
    /// <summary>Bytes of committed record data after the page header (flag bits removed).</summary>
    public int CommitLength { get; }
    public bool MissedEvents { get; }
    public bool MissedEventsStored { get; }
    /// <summary>Events lost before this page: the stored count, -1 when lost but not counted, 0 when none.</summary>
    public long MissedEventCount { get; }
    /// <summary>Byte offset in the page of the payload last returned.</summary>
    public int PayloadOffset { get; private set; }

    /// <summary>Advances to the next data record. Returns false at the end of the committed data.</summary>
    public bool TryReadNext(out ulong timestamp, out ReadOnlySpan<byte> payload)
    {
        if (TryReadRecord(_page, ref _state, out var start, out var length, _file, _fileOffset))
        {
            timestamp = _state.Timestamp;
            PayloadOffset = start;
            payload = _page.Slice(start, length);
            return true;
        }

        timestamp = _state.Timestamp;
        payload = default;
        return false;
    }

    /// <summary>The decoded page header plus the state positioned at the first record.</summary>
    public readonly record struct PageHeader(ulong Timestamp, int CommitLength, bool MissedEvents, bool MissedStored,
        long MissedCount, RingBufferPageState InitialState);

    /// <exception cref="TraceFormatException">The page is shorter than the layout or the commit exceeds the data
    /// area.</exception>
    public static PageHeader ReadHeader(ReadOnlySpan<byte> page, HeaderPageLayout layout, string file, long fileOffset)
    {
        if (page.Length < layout.DataOffset)
            throw new TraceFormatException(
                file, fileOffset, $"a ring-buffer page header of {layout.DataOffset} bytes, found only {page.Length}");
        var ts = BinaryPrimitives.ReadUInt64LittleEndian(page[layout.TimestampOffset..]);
        var commitWord = layout.CommitSize == 8
            ? BinaryPrimitives.ReadUInt64LittleEndian(page[layout.CommitOffset..])
            : BinaryPrimitives.ReadUInt32LittleEndian(page[layout.CommitOffset..]);
        var missed = (commitWord & MissedEventsFlag) != 0;
        var stored = (commitWord & MissedStoredFlag) != 0;
        // Like libtraceevent's kbuffer, only the low 27 bits are the length: trace-cmd-written files can carry set bits
        // above the flags (seen in 'trace-cmd convert' output), and trace-cmd report reads those pages fine.
        var commit = commitWord & CommitMask;
        var dataCapacity = Math.Min(layout.DataSize, page.Length - layout.DataOffset);
        if (commit > (ulong)dataCapacity)
            throw new TraceFormatException(file, fileOffset + layout.CommitOffset,
                $"a page commit length of at most {dataCapacity} bytes, found {commit}");

        long missedCount = 0;
        if (missed)
        {
            missedCount = -1;
            // The kernel stores the count after the committed data only when it fits in the page.
            var countAt = layout.DataOffset + (int)commit;
            if (stored && countAt + layout.CommitSize <= page.Length)
            {
                missedCount = layout.CommitSize == 8
                    ? (long)BinaryPrimitives.ReadUInt64LittleEndian(page[countAt..])
                    : BinaryPrimitives.ReadUInt32LittleEndian(page[countAt..]);
            }
        }

        var state = new RingBufferPageState
        {
            Position = layout.DataOffset,
            End = layout.DataOffset + (int)commit,
            Timestamp = ts
        };
        return new PageHeader(ts, (int)commit, missed, stored, missedCount, state);
    }

    /// <summary>
    /// Core record walk shared with the per-CPU cursors: advances <paramref name="state"/> past time extends, absolute
    /// stamps and padding to the next data record, returning its payload position inside <paramref name="page"/>.
    /// </summary>
    public static bool TryReadRecord(
        ReadOnlySpan<byte> page, ref RingBufferPageState state, out int payloadStart, out int payloadLength,
        string file, long fileOffset)
    {
        var pos = state.Position;
        var end = state.End;
        var ts = state.Timestamp;
        while (end - pos >= 4)
        {
            var word = BinaryPrimitives.ReadUInt32LittleEndian(page[pos..]);
            var typeLen = (int)(word & 0x1F);
            var delta = word >> 5;
            switch (typeLen)
            {
                case 0:
                    {
                        if (end - pos < 8)
                            throw Corrupt(file, fileOffset, pos, "a length word after a type_len 0 record header");
                        var len = BinaryPrimitives.ReadUInt32LittleEndian(page[(pos + 4)..]);
                        // array[0] counts itself plus the payload.
                        if (len < 4 || len > (uint)(end - pos - 4))
                            throw Corrupt(file, fileOffset, pos,
                                $"a type_len 0 record length between 4 and {end - pos - 4}, found {len}");
                        var total = 4 + (((int)len + 3) & ~3);
                        if (total > end - pos) total = end - pos;
                        ts += delta;
                        payloadStart = pos + 8;
                        payloadLength = (int)len - 4;
                        state.Position = pos + total;
                        state.Timestamp = ts;
                        return true;
                    }
                case TypePadding:
                    {
                        // A zero delta marks the unused tail of the page; otherwise this is a discarded event.
                        if (delta == 0)
                        {
                            pos = end;
                            break;
                        }

                        if (end - pos < 8)
                            throw Corrupt(file, fileOffset, pos, "a length word after a padding record header");
                        var len = BinaryPrimitives.ReadUInt32LittleEndian(page[(pos + 4)..]);
                        if (len > (uint)(end - pos - 4))
                            throw Corrupt(
                                file, fileOffset, pos, $"a padding length of at most {end - pos - 4}, found {len}");
                        // libtraceevent (what trace-cmd report uses) keeps a discarded event's delta, so later deltas
                        // stay aligned.
                        ts += delta;
                        pos += 4 + Math.Max(4, ((int)len + 3) & ~3);
                        break;
                    }
                case TypeTimeExtend:
                    {
                        if (end - pos < 8) throw Corrupt(file, fileOffset, pos, "8 bytes for a time-extend record");
                        ulong ext = BinaryPrimitives.ReadUInt32LittleEndian(page[(pos + 4)..]);
                        ts += (ext << TimeShift) | delta;
                        pos += 8;
                        break;
                    }
                case TypeTimeStamp:
                    {
                        if (end - pos < 8)
                            throw Corrupt(file, fileOffset, pos, "8 bytes for an absolute time-stamp record");
                        ulong abs = BinaryPrimitives.ReadUInt32LittleEndian(page[(pos + 4)..]);
                        abs = (abs << TimeShift) | delta;
                        ts = FixAbsoluteTimestamp(abs, ts);
                        pos += 8;
                        break;
                    }
                default:
                    {
                        var total = 4 + (typeLen * 4);
                        if (total > end - pos)
                            throw Corrupt(file, fileOffset, pos,
                                $"a {total}-byte record within the {end - pos} committed bytes left");
                        ts += delta;
                        payloadStart = pos + 4;
                        payloadLength = typeLen * 4;
                        state.Position = pos + total;
                        state.Timestamp = ts;
                        return true;
                    }
            }
        }

        state.Position = end;
        state.Timestamp = ts;
        payloadStart = 0;
        payloadLength = 0;
        return false;
    }

    /// <summary>
    /// An absolute stamp carries only the low 59 bits; like the kernel (rb_fix_abs_ts) take the top bits from the
    /// running time and carry into them when the low part wrapped.
    /// </summary>
    public static ulong FixAbsoluteTimestamp(ulong abs, ulong current)
    {
        if ((current & TsMsb) == 0) return abs;
        abs |= current & TsMsb;
        if (abs < current) abs += 1UL << 59;
        return abs;
    }

    private static TraceFormatException Corrupt(string file, long fileOffset, int pos, string expected) =>
        new(file, fileOffset + pos, expected);
}
