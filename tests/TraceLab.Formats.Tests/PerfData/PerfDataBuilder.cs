using System.Buffers;
using System.Buffers.Binary;
using System.Text;

namespace TraceLab.Formats.Tests.PerfData;

/// <summary>
/// Writes small perf.data files the way perf record lays them out (file header, attrs with ids, data section,
/// feature table with HEADER_TRACING_DATA and HEADER_NRCPUS), with the test resource formats. Samples have
/// sample_type IP|TID|TIME|CPU|PERIOD|RAW|IDENTIFIER and sample_id_all, as perf record -a writes tracepoints.
/// </summary>
internal sealed class PerfDataBuilder
{
    private const ulong SampleType = 1 | 2 | 4 | 128 | 256 | 1024 | (1UL << 16);
    private const ulong Id = 77;
    private readonly ArrayBufferWriter<byte> _data = new();

    public int Cpus { get; init; } = 2;

    public PerfDataBuilder Sample(long time, int cpu, byte[] raw)
    {
        var body = new List<byte>();
        U64(body, Id);
        U64(body, 0xffffffff81000000);
        U32(body, 1); U32(body, 1);
        U64(body, (ulong)time);
        U32(body, (uint)cpu); U32(body, 0);
        U64(body, 1);
        // The raw block (u32 size + data) is padded so that the record stays 8-byte aligned.
        var padded = (raw.Length + 4 + 7) / 8 * 8 - 4;
        U32(body, (uint)padded);
        body.AddRange(raw);
        body.AddRange(new byte[padded - raw.Length]);
        return Record(9, body);
    }

    public PerfDataBuilder FinishedRound() => Record(68, []);

    public PerfDataBuilder Comm(int pid, int tid, string comm, long time, int cpu)
    {
        var body = new List<byte>();
        U32(body, (uint)pid); U32(body, (uint)tid);
        var bytes = Encoding.ASCII.GetBytes(comm);
        body.AddRange(bytes);
        body.AddRange(new byte[(bytes.Length + 8) / 8 * 8 - bytes.Length]);
        Trailer(body, time, cpu);
        return Record(3, body);
    }

    public PerfDataBuilder Lost(long count, long time, int cpu)
    {
        var body = new List<byte>();
        U64(body, Id);
        U64(body, (ulong)count);
        Trailer(body, time, cpu);
        return Record(2, body);
    }

    /// <summary>A record type the reader does not model (PERF_RECORD_MMAP2 stand-in), which it must step over.</summary>
    public PerfDataBuilder Other(uint type, int size) => Record(type, new byte[size - 8].ToList());

    public byte[] Build()
    {
        var attrs = new List<byte>();
        // perf_event_attr (128 bytes of it are enough here): type 2 (tracepoint), size, config, period, sample_type,
        // read_format, flags (bit 18 sample_id_all), rest zero.
        var attr = new byte[128];
        BinaryPrimitives.WriteUInt32LittleEndian(attr, 2);
        BinaryPrimitives.WriteUInt32LittleEndian(attr.AsSpan(4), 128);
        BinaryPrimitives.WriteUInt64LittleEndian(attr.AsSpan(16), 1);
        BinaryPrimitives.WriteUInt64LittleEndian(attr.AsSpan(24), SampleType);
        BinaryPrimitives.WriteUInt64LittleEndian(attr.AsSpan(40), 1UL << 18);

        var tracing = TracingData();
        var data = _data.WrittenSpan.ToArray();
        const int headerSize = 104;
        var idsOffset = headerSize;
        var attrsOffset = idsOffset + 8;
        var attrEntry = attr.Length + 16;
        var dataOffset = attrsOffset + attrEntry;
        var featTable = dataOffset + data.Length;
        var tracingOffset = featTable + 2 * 16;
        var nrcpusOffset = tracingOffset + tracing.Length;

        var file = new MemoryStream();
        var w = new BinaryWriter(file);
        w.Write("PERFILE2"u8);
        w.Write((ulong)headerSize);
        w.Write((ulong)attrEntry);
        w.Write((ulong)attrsOffset); w.Write((ulong)attrEntry);
        w.Write((ulong)dataOffset); w.Write((ulong)data.Length);
        w.Write(0UL); w.Write(0UL);
        w.Write((1UL << 1) | (1UL << 7)); w.Write(0UL); w.Write(0UL); w.Write(0UL);
        w.Write(Id);
        w.Write(attr);
        w.Write((ulong)idsOffset); w.Write(8UL);
        w.Write(data);
        w.Write((ulong)tracingOffset); w.Write((ulong)tracing.Length);
        w.Write((ulong)nrcpusOffset); w.Write(8UL);
        w.Write(tracing);
        w.Write((uint)Cpus); w.Write((uint)Cpus);
        return file.ToArray();
    }

    private PerfDataBuilder Record(uint type, List<byte> body)
    {
        var head = new byte[8];
        BinaryPrimitives.WriteUInt32LittleEndian(head, type);
        BinaryPrimitives.WriteUInt16LittleEndian(head.AsSpan(6), (ushort)(body.Count + 8));
        _data.Write(head);
        _data.Write(body.ToArray());
        return this;
    }

    private static void Trailer(List<byte> body, long time, int cpu)
    {
        // sample_id_all trailer for TID|TIME|CPU|IDENTIFIER: pid/tid, time, cpu/res, identifier.
        U32(body, 1); U32(body, 1);
        U64(body, (ulong)time);
        U32(body, (uint)cpu); U32(body, 0);
        U64(body, Id);
    }

    /// <summary>HEADER_TRACING_DATA: the trace-cmd v6 metadata layout with version "0.6" and no CPU data.</summary>
    private static byte[] TracingData()
    {
        var s = new MemoryStream();
        var w = new BinaryWriter(s);
        w.Write(new byte[] { 0x17, 0x08, 0x44 });
        w.Write("tracing0.6\0"u8);
        w.Write((byte)0); w.Write((byte)8); w.Write(4096u);
        void Section(string tag, string text)
        {
            w.Write(Encoding.ASCII.GetBytes(tag + "\0"));
            var bytes = Encoding.UTF8.GetBytes(text);
            w.Write((ulong)bytes.Length); w.Write(bytes);
        }

        Section("header_page", TestData.Resource("header_page"));
        Section("header_event", TestData.Resource("header_event"));
        var all = TestData.AllFormats().ToList();
        var ftrace = all.Where(f => f.System == "ftrace").ToList();
        w.Write((uint)ftrace.Count);
        foreach (var f in ftrace) { var b = Encoding.UTF8.GetBytes(f.Text); w.Write((ulong)b.Length); w.Write(b); }
        var systems = all.Where(f => f.System != "ftrace").GroupBy(f => f.System).ToList();
        w.Write((uint)systems.Count);
        foreach (var g in systems)
        {
            w.Write(Encoding.ASCII.GetBytes(g.Key + "\0"));
            w.Write((uint)g.Count());
            foreach (var f in g) { var b = Encoding.UTF8.GetBytes(f.Text); w.Write((ulong)b.Length); w.Write(b); }
        }

        w.Write(0u);
        w.Write(0u);
        var cmdlines = Encoding.ASCII.GetBytes("500 saved-name\n");
        w.Write((ulong)cmdlines.Length); w.Write(cmdlines);
        return s.ToArray();
    }

    private static void U32(List<byte> b, uint v) { var x = new byte[4]; BinaryPrimitives.WriteUInt32LittleEndian(x, v); b.AddRange(x); }

    private static void U64(List<byte> b, ulong v) { var x = new byte[8]; BinaryPrimitives.WriteUInt64LittleEndian(x, v); b.AddRange(x); }
}
