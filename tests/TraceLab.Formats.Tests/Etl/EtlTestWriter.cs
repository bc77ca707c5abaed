using System.Buffers.Binary;
using System.Text;

namespace TraceLab.Formats.Tests.Etl;

/// <summary>
/// Writes complete .etl files from the documented layouts (docs/formats.md#etl: file, buffers, header, records), with
/// its own constants, independently of the reader: a header buffer holding the logfile header event, then per-CPU
/// buffers of 8-aligned event records, 0xFF-filled, numbered by one global sequence counter, optionally compressed
/// (MS-XCA Plain LZ77, flag 0x40) and written to the file out of sequence order as real loggers flush them.
/// </summary>
internal sealed class EtlTestWriter
{
    public const long T0 = 5_000_000;
    public const long PerfFreq = 10_000_000;

    private readonly Dictionary<int, List<byte[]>> _events = [];

    public int BufferSize { get; init; } = 1024;
    public int PointerSize { get; init; } = 8;
    public int Cpus { get; init; } = 2;
    public uint EventsLost { get; init; }
    public uint BuffersLost { get; init; }
    public int ClockType { get; init; } = 1;
    /// <summary>Which data buffers (numbered from 0 in write order) are compressed.</summary>
    public Func<int, bool> Compress { get; init; } = _ => false;
    /// <summary>Buffer flags added to the data buffers of a CPU (e.g. 0x2 EVENTS_LOST).</summary>
    public Func<int, ushort> ExtraFlags { get; init; } = _ => 0;

    /// <summary>Raw time stamp of an event <paramref name="ns"/> nanoseconds after the session start (10 MHz
    /// clock).</summary>
    public static long Raw(long ns) => T0 + ns / 100;

    public EtlTestWriter Add(int cpu, byte[] record)
    {
        if (!_events.TryGetValue(cpu, out var list)) _events[cpu] = list = [];
        list.Add(record);
        return this;
    }

    // ---- event records ----

    public static byte[] SystemEvent(int pointerSize, ushort hook, ushort version, int tid, int pid, long raw,
        byte[] payload) =>
        Kernel(pointerSize == 8 ? (byte)0x02 : (byte)0x01, 0x20, hook, version, payload, h =>
        {
            BinaryPrimitives.WriteInt32LittleEndian(h.AsSpan(8), tid);
            BinaryPrimitives.WriteInt32LittleEndian(h.AsSpan(12), pid);
            BinaryPrimitives.WriteInt64LittleEndian(h.AsSpan(16), raw);
            BinaryPrimitives.WriteUInt32LittleEndian(h.AsSpan(24), 7); // KernelTime
            BinaryPrimitives.WriteUInt32LittleEndian(h.AsSpan(28), 9); // UserTime
        });

    public static byte[] Compact(int pointerSize, ushort hook, ushort version, int tid, int pid, long raw,
        byte[] payload) =>
        Kernel(pointerSize == 8 ? (byte)0x04 : (byte)0x03, 0x18, hook, version, payload, h =>
        {
            BinaryPrimitives.WriteInt32LittleEndian(h.AsSpan(8), tid);
            BinaryPrimitives.WriteInt32LittleEndian(h.AsSpan(12), pid);
            BinaryPrimitives.WriteInt64LittleEndian(h.AsSpan(16), raw);
        });

    /// <param name="pmcCounters">PMC counters logged after the header (version bits 0x0700).</param>
    public static byte[] PerfInfo(int pointerSize, ushort hook, ushort version, long raw, byte[] payload,
        int pmcCounters = 0)
    {
        var extension = new byte[8 * pmcCounters];
        extension.AsSpan().Fill(0x77);
        return Kernel(pointerSize == 8 ? (byte)0x11 : (byte)0x10, 0x10, hook, (ushort)(version | (pmcCounters << 8)),
            [.. extension, .. payload], h => BinaryPrimitives.WriteInt64LittleEndian(h.AsSpan(8), raw));
    }

    private static byte[] Kernel(byte type, int headerSize, ushort hook, ushort version, byte[] payload,
        Action<byte[]> fill)
    {
        var b = new byte[headerSize + payload.Length];
        BinaryPrimitives.WriteUInt16LittleEndian(b, version);
        b[2] = type;
        b[3] = 0xC0;
        BinaryPrimitives.WriteUInt16LittleEndian(b.AsSpan(4), (ushort)b.Length);
        BinaryPrimitives.WriteUInt16LittleEndian(b.AsSpan(6), hook);
        fill(b);
        payload.CopyTo(b, headerSize);
        return b;
    }

    /// <summary>A classic EVENT_TRACE_HEADER (0x30 bytes) event with its GUID inline.</summary>
    public static byte[] Full(int pointerSize, Guid guid, byte type, ushort version, int tid, int pid,
        long raw, byte[] payload)
    {
        var b = new byte[0x30 + payload.Length];
        BinaryPrimitives.WriteUInt16LittleEndian(b, (ushort)b.Length);
        b[2] = pointerSize == 8 ? (byte)0x14 : (byte)0x0A;
        b[3] = 0xC0;
        b[4] = type;
        b[5] = 4; // level
        BinaryPrimitives.WriteUInt16LittleEndian(b.AsSpan(6), version);
        BinaryPrimitives.WriteInt32LittleEndian(b.AsSpan(8), tid);
        BinaryPrimitives.WriteInt32LittleEndian(b.AsSpan(12), pid);
        BinaryPrimitives.WriteInt64LittleEndian(b.AsSpan(16), raw);
        guid.TryWriteBytes(b.AsSpan(0x18));
        payload.CopyTo(b, 0x30);
        return b;
    }

    /// <summary>An EVENT_INSTANCE_GUID_HEADER (0x48 bytes) event: the classic header plus instance ids and a parent
    /// GUID.</summary>
    public static byte[] Instance(int pointerSize, Guid guid, byte type, ushort version, int tid, int pid,
        long raw, byte[] payload)
    {
        var classic = Full(pointerSize, guid, type, version, tid, pid, raw, []);
        var b = new byte[0x48 + payload.Length];
        classic.CopyTo(b, 0);
        BinaryPrimitives.WriteUInt16LittleEndian(b, (ushort)b.Length);
        b[2] = pointerSize == 8 ? (byte)0x15 : (byte)0x0B;
        BinaryPrimitives.WriteUInt32LittleEndian(b.AsSpan(0x30), 77); // InstanceId
        BinaryPrimitives.WriteUInt32LittleEndian(b.AsSpan(0x34), 76); // ParentInstanceId
        Guid.NewGuid().TryWriteBytes(b.AsSpan(0x38));
        payload.CopyTo(b, 0x48);
        return b;
    }

    /// <summary>A WPP message: u16 Size, a reserved byte, 0x90, u16 MessageNumber, u16 OptionFlags (none), then
    /// data.</summary>
    public static byte[] Message(byte[] data)
    {
        var b = new byte[8 + data.Length];
        BinaryPrimitives.WriteUInt16LittleEndian(b, (ushort)b.Length);
        b[3] = 0x90;
        BinaryPrimitives.WriteUInt16LittleEndian(b.AsSpan(4), 12);
        data.CopyTo(b, 8);
        return b;
    }

    /// <summary>An EVENT_HEADER (0x50 bytes) event, with extended data items (type, data) when given.</summary>
    public static byte[] WithEventHeader(int pointerSize, Guid provider, ushort id, byte version, byte opcode, int tid,
        int pid, long raw, byte[] payload, params (ushort Type, byte[] Data)[] items)
    {
        var itemBytes = new List<byte>();
        for (var k = 0; k < items.Length; k++)
        {
            var size = (8 + items[k].Data.Length + 7) & ~7;
            var item = new byte[size];
            BinaryPrimitives.WriteUInt16LittleEndian(item, (ushort)size);
            BinaryPrimitives.WriteUInt16LittleEndian(item.AsSpan(2), items[k].Type);
            BinaryPrimitives.WriteUInt16LittleEndian(item.AsSpan(4), (ushort)(k + 1 < items.Length ? 1 : 0));
            BinaryPrimitives.WriteUInt16LittleEndian(item.AsSpan(6), (ushort)items[k].Data.Length);
            items[k].Data.CopyTo(item, 8);
            itemBytes.AddRange(item);
        }

        var b = new byte[0x50 + itemBytes.Count + payload.Length];
        BinaryPrimitives.WriteUInt16LittleEndian(b, (ushort)b.Length);
        b[2] = pointerSize == 8 ? (byte)0x13 : (byte)0x12;
        b[3] = 0xC0;
        BinaryPrimitives.WriteUInt16LittleEndian(b.AsSpan(4), (ushort)(items.Length > 0 ? 1 : 0));
        BinaryPrimitives.WriteInt32LittleEndian(b.AsSpan(8), tid);
        BinaryPrimitives.WriteInt32LittleEndian(b.AsSpan(12), pid);
        BinaryPrimitives.WriteInt64LittleEndian(b.AsSpan(16), raw);
        provider.TryWriteBytes(b.AsSpan(0x18));
        BinaryPrimitives.WriteUInt16LittleEndian(b.AsSpan(0x28), id);
        b[0x2A] = version;
        b[0x2C] = 4; // level
        b[0x2D] = opcode;
        itemBytes.CopyTo(b, 0x50);
        payload.CopyTo(b, 0x50 + itemBytes.Count);
        return b;
    }

    /// <summary>A record of a header type no reader knows (0x0C, "TIMED"), size-first like the other non-kernel
    /// kinds.</summary>
    public static byte[] UnknownKind(int size)
    {
        var b = new byte[size];
        BinaryPrimitives.WriteUInt16LittleEndian(b, (ushort)size);
        b[2] = 0x0C;
        b[3] = 0xC0;
        return b;
    }

    // ---- the file ----

    public byte[] Build()
    {
        var buffers = new List<(int Cpu, byte[] Events)>();
        foreach (var (cpu, records) in _events.OrderBy(kv => kv.Key))
        {
            var current = new List<byte>();
            foreach (var r in records)
            {
                var padded = (r.Length + 7) & ~7;
                if (0x48 + current.Count + padded > BufferSize)
                {
                    buffers.Add((cpu, [.. current]));
                    current.Clear();
                }

                current.AddRange(r);
                current.AddRange(new byte[padded - r.Length]);
            }

            if (current.Count > 0) buffers.Add((cpu, [.. current]));
        }

        // Sequence numbers follow fill order per CPU, interleaved across CPUs; the file order swaps neighbours.
        var numbered = buffers.Select((b, i) => (b.Cpu, b.Events, Seq: (long)i + 1)).ToList();
        for (var i = 0; i + 1 < numbered.Count; i += 2) (numbered[i], numbered[i + 1]) = (numbered[i + 1], numbered[i]);

        var file = new List<byte>();
        file.AddRange(HeaderBuffer(numbered.Count + 1));
        for (var i = 0; i < numbered.Count; i++) file.AddRange(DataBuffer(numbered[i].Cpu, numbered[i].Seq,
            numbered[i].Events, Compress(i)));
        return [.. file];
    }

    private byte[] HeaderBuffer(int buffersWritten)
    {
        var strings = Encoding.Unicode.GetBytes("TraceLab Test Logger\0C:\\test.etl\0");
        var fixedSize = PointerSize == 8 ? 0x118 : 0x110;
        var p = new byte[fixedSize + strings.Length];
        var shift = PointerSize == 8 ? 8 : 0;
        BinaryPrimitives.WriteInt32LittleEndian(p, BufferSize);
        BinaryPrimitives.WriteUInt32LittleEndian(p.AsSpan(0x04), 0x0501000A);
        BinaryPrimitives.WriteInt32LittleEndian(p.AsSpan(0x08), 19041);
        BinaryPrimitives.WriteInt32LittleEndian(p.AsSpan(0x0C), Cpus);
        BinaryPrimitives.WriteInt64LittleEndian(p.AsSpan(0x10), 133_000_000_000_000_000);
        BinaryPrimitives.WriteUInt32LittleEndian(p.AsSpan(0x18), 156250);
        BinaryPrimitives.WriteUInt32LittleEndian(p.AsSpan(0x20), 0x02000080);
        BinaryPrimitives.WriteInt32LittleEndian(p.AsSpan(0x24), buffersWritten);
        BinaryPrimitives.WriteInt32LittleEndian(p.AsSpan(0x28), 1);
        BinaryPrimitives.WriteInt32LittleEndian(p.AsSpan(0x2C), PointerSize);
        BinaryPrimitives.WriteUInt32LittleEndian(p.AsSpan(0x30), EventsLost);
        BinaryPrimitives.WriteInt32LittleEndian(p.AsSpan(0x34), 3000);
        BinaryPrimitives.WriteInt64LittleEndian(p.AsSpan(0xF0 + shift), 132_999_000_000_000_000); // BootTime
        BinaryPrimitives.WriteInt64LittleEndian(p.AsSpan(0xF8 + shift), PerfFreq);
        BinaryPrimitives.WriteInt64LittleEndian(p.AsSpan(0x100 + shift), 132_999_999_000_000_000); // StartTime
        BinaryPrimitives.WriteInt32LittleEndian(p.AsSpan(0x108 + shift), ClockType);
        BinaryPrimitives.WriteUInt32LittleEndian(p.AsSpan(0x10C + shift), BuffersLost);
        strings.CopyTo(p, fixedSize);
        var header = SystemEvent(PointerSize, 0x0000, 2, 100, 200, T0, p);
        var events = new byte[(header.Length + 7) & ~7];
        header.CopyTo(events, 0);
        return Buffer(Math.Max(BufferSize, 0x48 + events.Length), 0, 0, events, 0x0001 | 0x0020, 4, compressed: false);
    }

    private byte[] DataBuffer(int cpu, long seq, byte[] events, bool compressed) =>
        Buffer(BufferSize, cpu, seq, events, (ushort)(0x0020 | ExtraFlags(cpu)), 0, compressed);

    private static byte[] Buffer(int size, int cpu, long seq, byte[] events, ushort flags, ushort type, bool compressed)
    {
        var body = compressed ? XpressTestCompressor.Compress(events) : events;
        var total = compressed ? 0x48 + body.Length : size;
        var b = new byte[total];
        b.AsSpan().Fill(0xFF);
        b.AsSpan(0, 0x48).Clear();
        BinaryPrimitives.WriteInt32LittleEndian(b, total);
        BinaryPrimitives.WriteInt32LittleEndian(b.AsSpan(0x04), 0x48 + events.Length); // SavedOffset
        BinaryPrimitives.WriteInt32LittleEndian(b.AsSpan(0x08), total + 0x48 + events.Length); // CurrentOffset: junk
        BinaryPrimitives.WriteInt64LittleEndian(b.AsSpan(0x10), 0x7FFF_0000); // TimeStamp: not a time base
        BinaryPrimitives.WriteInt64LittleEndian(b.AsSpan(0x18), seq);
        BinaryPrimitives.WriteUInt16LittleEndian(b.AsSpan(0x28), (ushort)cpu);
        BinaryPrimitives.WriteUInt16LittleEndian(b.AsSpan(0x2A), 0x1C); // LoggerId
        BinaryPrimitives.WriteUInt32LittleEndian(b.AsSpan(0x2C), 3);
        BinaryPrimitives.WriteInt32LittleEndian(b.AsSpan(0x30), 0x48 + events.Length);
        BinaryPrimitives.WriteUInt16LittleEndian(b.AsSpan(0x34), (ushort)(flags | (compressed ? 0x40 : 0)));
        BinaryPrimitives.WriteUInt16LittleEndian(b.AsSpan(0x36), type);
        body.CopyTo(b, 0x48);
        return b;
    }
}
