using System.Buffers;
using System.Buffers.Binary;
using System.Text;
using TraceLab.Formats.PerfData;
using TraceLab.Formats.Registry;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Formats.Tests.PerfData;

/// <summary>
/// Writes small perf.data files the way perf record lays them out (file header, attrs with ids, data section,
/// feature table with HEADER_TRACING_DATA and HEADER_NRCPUS), with the test resource formats. Samples have
/// sample_type IP|TID|TIME|CPU|PERIOD|RAW|IDENTIFIER and sample_id_all, as perf record -a writes tracepoints.
/// <para>
/// <see cref="Compress"/> writes the data section as perf record -z does: the records go through one zstd stream,
/// flushed every <see cref="CompressChunk"/> bytes (cutting records), its output cut into COMPRESSED records, with
/// FINISHED_ROUND written uncompressed between them; HEADER_COMPRESSED gives level and mmap_len.
/// <see cref="Tracepoints"/> false writes a software event with context_switch (perf record --switch-events) and no
/// tracing data.
/// </para>
/// </summary>
internal sealed class PerfDataBuilder : IDisposable
{
    private const ulong SampleType = 1 | 2 | 4 | 128 | 256 | 1024 | (1UL << 16);
    private const ulong SoftwareSampleType = 1 | 2 | 4 | 128 | 256 | (1UL << 16);
    private const ulong Id = 77;
    private MemoryStream _data = new();
    /// <summary>The data section in pieces: records to compress, or records written as they are.</summary>
    private readonly List<(byte[] Bytes, bool Plain)> _pieces = new();

    public int Cpus { get; init; } = 2;

    /// <summary>HEADER_NRCPUS nr_cpus_online (default: <see cref="Cpus"/>, all online).</summary>
    public int? OnlineCpus { get; init; }

    /// <summary>
    /// One sample id per CPU (77 + cpu), as perf record -a opens each event once per CPU and lists the ids in CPU
    /// order; false: one id for everything.
    /// </summary>
    public bool IdPerCpu { get; init; }

    private ulong IdOf(int cpu) => IdPerCpu ? Id + (ulong)cpu : Id;

    /// <summary>Write the data section as perf record -z does.</summary>
    public bool Compress { get; init; }

    /// <summary>Bytes of records per zstd flush (perf: one ring buffer push).</summary>
    public int CompressChunk { get; init; } = 997;

    /// <summary>HEADER_COMPRESSED mmap_len: the most one COMPRESSED record may inflate to.</summary>
    public uint MmapLength { get; init; } = 1 << 20;

    /// <summary>
    /// False: no tracepoint and no tracing data, a software event recording context switches instead.
    /// </summary>
    public bool Tracepoints { get; init; } = true;

    /// <summary>
    /// With <see cref="Tracepoints"/>: also set context_switch on the tracepoint attr (SWITCH records beside
    /// sched_switch).
    /// </summary>
    public bool ContextSwitch { get; init; }

    /// <summary>Samples carry PERF_SAMPLE_CALLCHAIN (perf record -g): the callchain given to
    /// <see cref="Sample"/>, empty when none is.</summary>
    public bool Callchains { get; init; }

    /// <param name="pid">PERF_SAMPLE_TID's pid: the process of the thread the sample was taken in.</param>
    /// <param name="tid">PERF_SAMPLE_TID's tid.</param>
    /// <param name="callchain">With <see cref="Callchains"/>: the entries, context markers included.</param>
    /// <param name="callchainCount">The count written before the entries (default: their number).</param>
    public PerfDataBuilder Sample(long time, int cpu, byte[] raw, int pid = 1, int tid = 1, ulong[]? callchain = null,
        ulong? callchainCount = null)
    {
        var body = new List<byte>();
        U64(body, IdOf(cpu));
        U64(body, 0xffffffff81000000);
        U32(body, (uint)pid); U32(body, (uint)tid);
        U64(body, (ulong)time);
        U32(body, (uint)cpu); U32(body, 0);
        U64(body, 1);
        if (Callchains)
        {
            U64(body, callchainCount ?? (ulong)(callchain?.Length ?? 0));
            foreach (var ip in callchain ?? []) U64(body, ip);
        }
        // The raw block (u32 size + data) is padded so that the record stays 8-byte aligned.
        var padded = (raw.Length + 4 + 7) / 8 * 8 - 4;
        U32(body, (uint)padded);
        body.AddRange(raw);
        body.AddRange(new byte[padded - raw.Length]);
        return Record(9, body);
    }

    public PerfDataBuilder FinishedRound()
    {
        if (!Compress) return Record(68, []);
        // perf record -z writes FINISHED_ROUND itself, uncompressed, between the compressed pushes.
        Cut();
        var round = new byte[8];
        round[0] = 68;
        round[6] = 8;
        _pieces.Add((round, true));
        return this;
    }

    /// <summary>
    /// PERF_RECORD_SWITCH_CPU_WIDE: prev (the sample id's thread) leaves for next (switch-out record), or the reverse
    /// (switch-in).
    /// </summary>
    public PerfDataBuilder SwitchCpuWide(long time, int cpu, int thread, int other, bool @out, bool preempt = false)
    {
        var body = new List<byte>();
        U32(body, (uint)other); U32(body, (uint)other);
        Trailer(body, time, cpu, thread);
        return Record(15, body, (ushort)((@out ? 1 << 13 : 0) | (preempt ? 1 << 14 : 0)));
    }

    /// <summary>PERF_RECORD_SWITCH (per task): the sample id's thread switches out or in.</summary>
    public PerfDataBuilder SwitchTask(long time, int cpu, int thread, bool @out)
    {
        var body = new List<byte>();
        Trailer(body, time, cpu, thread);
        return Record(14, body, (ushort)(@out ? 1 << 13 : 0));
    }

    /// <summary>
    /// PERF_RECORD_FORK (type 7) or PERF_RECORD_EXIT (type 4): pid, ppid, tid, ptid, time. <paramref name="pid"/>:
    /// the task's process (default: its own tid, a new process; another tid makes it a thread of that process).
    /// </summary>
    public PerfDataBuilder Task(uint type, long time, int cpu, int tid, int parent, int? pid = null)
    {
        var body = new List<byte>();
        U32(body, (uint)(pid ?? tid)); U32(body, (uint)parent); U32(body, (uint)tid); U32(body, (uint)parent);
        U64(body, (ulong)time);
        Trailer(body, time, cpu, tid);
        return Record(type, body);
    }

    /// <summary>
    /// PERF_RECORD_MMAP2 (with the build-id instead of device and inode when <paramref name="buildId"/> is given).
    /// </summary>
    public PerfDataBuilder Mmap2(int pid, ulong start, ulong length, ulong pgoff, string path, long time, int cpu,
        byte[]? buildId = null, bool executable = true)
    {
        var body = new List<byte>();
        U32(body, (uint)pid); U32(body, (uint)pid);
        U64(body, start); U64(body, length); U64(body, pgoff);
        var id = new byte[24];
        if (buildId is not null)
        {
            id[0] = (byte)buildId.Length;
            buildId.CopyTo(id, 4);
        }

        body.AddRange(id);
        U32(body, executable ? 5u : 3u); U32(body, 2);
        var bytes = Encoding.ASCII.GetBytes(path);
        body.AddRange(bytes);
        body.AddRange(new byte[(bytes.Length + 8) / 8 * 8 - bytes.Length]);
        Trailer(body, time, cpu, pid);
        ushort misc = (ushort)((buildId is null ? 0 : 1 << 14) | (executable ? 0 : 1 << 13));
        return Record(10, body, misc);
    }

    /// <summary>PERF_RECORD_COMM of an exec (PERF_RECORD_MISC_COMM_EXEC).</summary>
    public PerfDataBuilder Exec(int pid, string comm, long time, int cpu)
    {
        var body = new List<byte>();
        U32(body, (uint)pid); U32(body, (uint)pid);
        var bytes = Encoding.ASCII.GetBytes(comm);
        body.AddRange(bytes);
        body.AddRange(new byte[(bytes.Length + 8) / 8 * 8 - bytes.Length]);
        Trailer(body, time, cpu, pid);
        return Record(3, body, 1 << 13);
    }

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
        U64(body, IdOf(cpu));
        U64(body, (ulong)count);
        Trailer(body, time, cpu);
        return Record(2, body);
    }

    /// <summary>
    /// PERF_RECORD_LOST_SAMPLES as perf record writes them at its end: u64 lost, then a trailer in which only the
    /// sample id is set (that of the event on <paramref name="cpuOfId"/>): pid, tid, time and cpu are 0.
    /// </summary>
    public PerfDataBuilder LostSamples(long count, int cpuOfId, ushort misc = 0)
    {
        var body = new List<byte>();
        U64(body, (ulong)count);
        U32(body, 0); U32(body, 0);
        U64(body, 0);
        U32(body, 0); U32(body, 0);
        U64(body, IdOf(cpuOfId));
        return Record(13, body, misc);
    }

    /// <summary>
    /// A record type the reader does not model (PERF_RECORD_MMAP2 stand-in), which it must step over.
    /// </summary>
    public PerfDataBuilder Other(uint type, int size) => Record(type, new byte[size - 8].ToList());

    /// <summary>
    /// PERF_RECORD_AUXTRACE claiming <paramref name="auxBytes"/> of AUX data after it (none is written: a damaged
    /// file when the length is not 0).
    /// </summary>
    public PerfDataBuilder Auxtrace(ulong auxBytes)
    {
        var body = new List<byte>();
        U64(body, auxBytes);
        body.AddRange(new byte[32]);
        return Record(71, body);
    }

    /// <summary>
    /// Writes the file into <paramref name="directory"/> and reads it whole; the caller disposes the reader.
    /// </summary>
    public PerfDataReader WriteAndRead(string directory)
    {
        var path = Path.Combine(directory, $"{Guid.NewGuid():N}.perf.data");
        File.WriteAllBytes(path, Build());
        var reader = PerfDataReader.Open(path, new TraceReadOptions());
        reader.Read(new TraceDatRoundTripTests.ListSink());
        return reader;
    }

    public byte[] Build()
    {
        // perf_event_attr (128 bytes of it are enough here): type 2 (tracepoint), size, config, period, sample_type,
        // read_format, flags (bit 18 sample_id_all, bit 26 context_switch), rest zero.
        var attr = new byte[128];
        BinaryPrimitives.WriteUInt32LittleEndian(attr, Tracepoints ? 2u : 1u);
        BinaryPrimitives.WriteUInt32LittleEndian(attr.AsSpan(4), 128);
        // config: the sched_switch format's id (the tracepoint recorded), or a software clock.
        BinaryPrimitives.WriteUInt64LittleEndian(attr.AsSpan(8), Tracepoints ? SchedSwitchId() : 0);
        BinaryPrimitives.WriteUInt64LittleEndian(attr.AsSpan(16), 1);
        BinaryPrimitives.WriteUInt64LittleEndian(attr.AsSpan(24),
            (Tracepoints ? SampleType : SoftwareSampleType) | (Callchains ? 32UL : 0));
        var contextSwitch = !Tracepoints || ContextSwitch ? 1UL << 26 : 0;
        BinaryPrimitives.WriteUInt64LittleEndian(attr.AsSpan(40), (1UL << 18) | contextSwitch);

        var tracing = Tracepoints ? TracingData() : [];
        var data = Compress ? CompressedData() : _data.ToArray();
        var features = new List<(int Bit, byte[] Bytes)>();
        if (Tracepoints) features.Add((1, tracing));
        var nrcpus = new byte[8];
        BinaryPrimitives.WriteUInt32LittleEndian(nrcpus, (uint)Cpus);
        BinaryPrimitives.WriteUInt32LittleEndian(nrcpus.AsSpan(4), (uint)(OnlineCpus ?? Cpus));
        features.Add((7, nrcpus));
        if (Compress)
        {
            // HEADER_COMPRESSED: version 0, type 1 (zstd), level 1, ratio, mmap_len.
            var comp = new byte[20];
            BinaryPrimitives.WriteUInt32LittleEndian(comp.AsSpan(4), 1);
            BinaryPrimitives.WriteUInt32LittleEndian(comp.AsSpan(8), 1);
            BinaryPrimitives.WriteUInt32LittleEndian(comp.AsSpan(12), 10);
            BinaryPrimitives.WriteUInt32LittleEndian(comp.AsSpan(16), MmapLength);
            features.Add((27, comp));
        }

        var ids = IdPerCpu ? Enumerable.Range(0, Cpus).Select(IdOf).ToArray() : [Id];
        return Layout(attr, ids, data, features);
    }

    private static byte[] Layout(byte[] attr, ulong[] ids, byte[] data, List<(int Bit, byte[] Bytes)> features)
    {
        const int headerSize = 104;
        var idsOffset = headerSize;
        var attrsOffset = idsOffset + 8 * ids.Length;
        var attrEntry = attr.Length + 16;
        var dataOffset = attrsOffset + attrEntry;
        var featTable = dataOffset + data.Length;

        var file = new MemoryStream();
        var w = new BinaryWriter(file);
        w.Write("PERFILE2"u8);
        w.Write((ulong)headerSize);
        w.Write((ulong)attrEntry);
        w.Write((ulong)attrsOffset); w.Write((ulong)attrEntry);
        w.Write((ulong)dataOffset); w.Write((ulong)data.Length);
        w.Write(0UL); w.Write(0UL);
        ulong bits = 0;
        foreach (var (bit, _) in features) bits |= 1UL << bit;
        w.Write(bits); w.Write(0UL); w.Write(0UL); w.Write(0UL);
        foreach (var id in ids) w.Write(id);
        w.Write(attr);
        w.Write((ulong)idsOffset); w.Write(8UL * (ulong)ids.Length);
        w.Write(data);
        var at = featTable + 16L * features.Count;
        foreach (var (_, bytes) in features)
        {
            w.Write((ulong)at); w.Write((ulong)bytes.Length);
            at += bytes.Length;
        }

        foreach (var (_, bytes) in features) w.Write(bytes);
        return file.ToArray();
    }

    private static ulong SchedSwitchId() => (ulong)TestData.Format("sched", "sched_switch").Id;

    private PerfDataBuilder Record(uint type, List<byte> body, ushort misc = 0)
    {
        var head = new byte[8];
        BinaryPrimitives.WriteUInt32LittleEndian(head, type);
        BinaryPrimitives.WriteUInt16LittleEndian(head.AsSpan(4), misc);
        BinaryPrimitives.WriteUInt16LittleEndian(head.AsSpan(6), (ushort)(body.Count + 8));
        _data.Write(head);
        _data.Write(body.ToArray());
        return this;
    }

    /// <summary>Ends the records to compress so far (a FINISHED_ROUND comes next, uncompressed).</summary>
    private void Cut()
    {
        if (_data.Length > 0) _pieces.Add((_data.ToArray(), false));
        _data = new MemoryStream();
    }

    /// <summary>
    /// The data section as perf record -z writes it: one zstd stream, flushed after each chunk of records (chunks cut
    /// records at arbitrary bytes), each flush's output cut into COMPRESSED records of at most 64 KiB.
    /// </summary>
    private byte[] CompressedData()
    {
        Cut();
        using var zstd = new ZstdSharp.Compressor(1);
        var output = new MemoryStream();
        var buffer = new byte[1 << 20];
        foreach (var (bytes, plain) in _pieces)
        {
            if (plain)
            {
                output.Write(bytes);
                continue;
            }

            for (var at = 0; at < bytes.Length; at += CompressChunk)
            {
                var chunk = bytes.AsSpan(at, Math.Min(CompressChunk, bytes.Length - at));
                var compressed = new MemoryStream();
                while (!chunk.IsEmpty)
                {
                    zstd.WrapStream(chunk, buffer, out var consumed, out var written, false);
                    compressed.Write(buffer, 0, written);
                    chunk = chunk[consumed..];
                }

                System.Buffers.OperationStatus status;
                do
                {
                    status = zstd.FlushStream(buffer, out var flushed);
                    compressed.Write(buffer, 0, flushed);
                }
                while (status != System.Buffers.OperationStatus.Done);

                var all = compressed.ToArray();
                for (var r = 0; r < all.Length; r += MaxCompressedPayload)
                {
                    var part = all.AsSpan(r, Math.Min(MaxCompressedPayload, all.Length - r));
                    var head = new byte[8];
                    head[0] = 81;
                    BinaryPrimitives.WriteUInt16LittleEndian(head.AsSpan(6), (ushort)(part.Length + 8));
                    output.Write(head);
                    output.Write(part);
                }
            }
        }

        return output.ToArray();
    }

    private const int MaxCompressedPayload = ushort.MaxValue - 8;

    private void Trailer(List<byte> body, long time, int cpu, int tid = 1)
    {
        // sample_id_all trailer for TID|TIME|CPU|IDENTIFIER: pid/tid, time, cpu/res, identifier.
        U32(body, (uint)tid); U32(body, (uint)tid);
        U64(body, (ulong)time);
        U32(body, (uint)cpu); U32(body, 0);
        U64(body, IdOf(cpu));
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

    private static void U32(
        List<byte> b, uint v)
    { var x = new byte[4]; BinaryPrimitives.WriteUInt32LittleEndian(x, v); b.AddRange(x); }

    private static void U64(
        List<byte> b, ulong v)
    { var x = new byte[8]; BinaryPrimitives.WriteUInt64LittleEndian(x, v); b.AddRange(x); }

    public void Dispose() => _data.Dispose();
}
