using System.Globalization;
using TraceLab.Core;
using TraceLab.Formats.Ftrace;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Formats.PerfData;

/// <summary>
/// Parses the perf.data file header, the attribute section and the feature sections TraceLab uses (tracing data,
/// OS release, CPU count); format: linux tools/perf/Documentation/perf.data-file-format.txt.
/// </summary>
internal sealed class PerfDataMetadataParser
{
    private const int HeaderSize = 104;
    private const int MinAttrSize = 64;
    private const int MaxAttrs = 1 << 16;
    private const int MaxFormatText = 1 << 20;
    private const int MaxCount = 1 << 20;
    private static readonly byte[] TracingMagic =
        [0x17, 0x08, 0x44, (byte)'t', (byte)'r', (byte)'a', (byte)'c', (byte)'i', (byte)'n', (byte)'g'];

    private readonly BoundedFileReader _r;
    private readonly PerfDataMetadata _m = new();

    private PerfDataMetadataParser(BoundedFileReader reader)
    {
        _r = reader;
    }

    public static PerfDataMetadata Parse(BoundedFileReader reader) => new PerfDataMetadataParser(reader).Run();

    private PerfDataMetadata Run()
    {
        var magic = _r.U64("perf.data magic");
        if (magic != 0x32454c4946524550UL)
        {
            _r.Seek(0, "magic"); throw _r.Fail(
            "the perf.data magic PERFILE2 (little-endian)");
        }
        var headerSize = _r.U64("header size");
        if (headerSize == 16)
            throw _r.Fail("a perf.data file (this is perf's pipe format: re-record with -o FILE, or convert with 'perf "
                + "inject -i IN -o OUT')");
        if (headerSize != HeaderSize) throw _r.Fail($"a header of {HeaderSize} bytes, found {headerSize}");
        var attrSize = _r.U64("attr size");
        var attrsOffset = (long)_r.U64("attrs offset");
        var attrsSize = (long)_r.U64("attrs size");
        var dataOffset = (long)_r.U64("data offset");
        var dataSize = (long)_r.U64("data size");
        _r.U64("event_types offset");
        _r.U64("event_types size");
        var features = new ulong[4];
        for (var i = 0; i < 4; i++) features[i] = _r.U64("feature bits");
        bool Feature(int bit) => (features[bit / 64] & (1UL << (bit % 64))) != 0;

        if (Feature(PerfFeature.DirFormat))
            throw _r.Fail("a single-file perf.data (directory format, perf record --threads, is not supported)");
        ParseAttrs(attrSize, attrsOffset, attrsSize);
        CheckData(dataOffset, dataSize);

        // The feature section table follows the data section: one {offset, size} per set bit, in bit order.
        var table = dataOffset + dataSize;
        _r.Seek(table, "feature section table");
        var sections = new Dictionary<int, (long Offset, long Size)>();
        for (var bit = 1; bit < 256; bit++)
        {
            if (!Feature(bit)) continue;
            var offset = (long)_r.U64("feature section offset");
            var size = (long)_r.U64("feature section size");
            sections[bit] = (offset, size);
        }

        foreach (var (bit, (offset, size)) in sections)
        {
            if (offset < 0 || size < 0 || offset > _r.Length || size > _r.Length - offset)
                throw new TraceFormatException(
                    _r.File, table, $"feature {bit} inside the file, found offset {offset} size {size}");
            _r.Seek(offset, $"feature {bit}");
            switch (bit)
            {
                case PerfFeature.TracingData: ParseTracingData(offset + size); break;
                case PerfFeature.OsRelease: _m.OsRelease = HeaderString("OS release"); break;
                case PerfFeature.NrCpus when size >= 8:
                    // nr_cpus_available (highest present CPU + 1), then nr_cpus_online.
                    _m.CpuCount = Math.Max(_m.CpuCount, (int)Math.Min(4096, _r.U32("CPUs available")));
                    _m.OnlineCpus = (int)Math.Min(4096, _r.U32("CPUs online"));
                    break;
                case PerfFeature.Compressed: ParseCompressed(size); break;
                case PerfFeature.BuildId: ParseBuildIds(size); break;
            }
        }

        return Finish();
    }

    private PerfDataMetadata Finish()
    {
        // Without tracepoints, the kernel's context switch records (perf record --switch-events) are the evidence.
        if (_m.Formats.Count == 0 && !_m.Attrs.Any(a => a.ContextSwitch))
            throw new TraceFormatException(_r.File, 0,
                "tracepoint formats (HEADER_TRACING_DATA) or context switch records: record sched tracepoints, " +
                "e.g. perf record -e 'sched:*' -a, or perf record --switch-events -a");
        return _m;
    }

    /// <summary>
    /// HEADER_BUILD_ID (tools/perf/util/header.c, write_build_id): one perf_record_header_build_id per file perf
    /// found samples in: u32 type, u16 misc, u16 size, s32 pid, 24 bytes of build-id (its length in byte 20 when
    /// misc has PERF_RECORD_MISC_BUILD_ID_SIZE, else 20), the NUL-padded file name. Only read to tell whether a
    /// binary changed since the recording: an entry that does not fit ends the list, it does not fail the file.
    /// </summary>
    private void ParseBuildIds(long size)
    {
        var end = _r.Position + size;
        while (end - _r.Position >= 36)
        {
            _r.U32("build-id record type");
            var misc = _r.U16("build-id record misc");
            var length = _r.U16("build-id record size");
            if (length < 36 || length > end - _r.Position + 8) return;
            var pid = (int)_r.U32("build-id pid");
            var id = _r.Bytes(24, "build-id");
            var idLength = (misc & (1 << 15)) != 0 ? Math.Min((int)id[20], 20) : 20;
            var name = _r.Bytes(length - 36, "build-id file name");
            var nul = Array.IndexOf(name, (byte)0);
            var path = System.Text.Encoding.UTF8.GetString(name, 0, nul < 0 ? name.Length : nul);
            if (path.Length > 0) _m.BuildIds.Add(new PerfBuildId(pid, path, id[..idLength]));
        }
    }

    /// <summary>
    /// HEADER_COMPRESSED (tools/perf/util/header.c, write_compressed): u32 version, type (1: zstd), level, ratio and
    /// mmap_len, the most one COMPRESSED record inflates to (perf's decompression buffer per record).
    /// </summary>
    private void ParseCompressed(long size)
    {
        if (size < 20) throw _r.Fail($"a HEADER_COMPRESSED section of 20 bytes, found {size}");
        _r.U32("compression version");
        var type = _r.U32("compression type");
        var level = _r.U32("compression level");
        _r.U32("compression ratio");
        var mmapLen = _r.U32("compression mmap_len");
        if (type != 1) throw _r.Fail($"zstd compression (HEADER_COMPRESSED type 1), found type {type}");
        if (mmapLen == 0) throw _r.Fail("a HEADER_COMPRESSED mmap_len above 0");
        _m.Compression = new PerfCompression((int)Math.Min(level, int.MaxValue), mmapLen);
    }

    private void ParseAttrs(ulong attrSize, long offset, long size)
    {
        // attr_size covers one perf_file_attr: the perf_event_attr and the {offset, size} of its ids.
        if (attrSize < MinAttrSize + 16 || attrSize > 4096)
            throw _r.Fail($"an attr size between {MinAttrSize + 16} and 4096 bytes, found {attrSize}");
        var entry = (long)attrSize;
        if (size < 0 || size % entry != 0 || size / entry > MaxAttrs)
            throw _r.Fail($"an attrs section that is a whole number of {entry}-byte entries, found {size} bytes");
        _r.Seek(offset, "attrs section");
        var positions = new List<(long Ids, long IdsSize, PerfEventAttr Attr)>();
        for (long i = 0; i < size / entry; i++)
        {
            var start = _r.Position;
            var type = _r.U32("attr type");
            _r.U32("attr size");
            var config = _r.U64("attr config");
            _r.U64("sample period");
            var sampleType = _r.U64("sample type");
            var readFormat = _r.U64("read format");
            var flags = _r.U64("attr flags");
            // Bit 18 of the flag word: sample_id_all (non-sample records carry the sample id trailer).
            // Bit 26: context_switch (the kernel writes SWITCH / SWITCH_CPU_WIDE records).
            // sample_regs_user at byte 80 of the attribute (PERF_ATTR_SIZE_VER3 and later: 96 bytes and more).
            ulong regsUser = 0;
            if (entry - 16 >= 96)
            {
                _r.Seek(start + 80, "sample_regs_user");
                regsUser = _r.U64("sample_regs_user");
            }

            var attr = new PerfEventAttr(type, config, sampleType, readFormat, (flags & (1UL << 18)) != 0, [])
            {
                ContextSwitch = (flags & (1UL << 26)) != 0,
                RegsUser = regsUser,
            };
            _r.Seek(start + entry - 16, "attr ids");
            var idsOffset = (long)_r.U64("ids offset");
            var idsSize = (long)_r.U64("ids size");
            positions.Add((idsOffset, idsSize, attr));
        }

        foreach (var (idsOffset, idsSize, attr) in positions)
        {
            if (idsSize < 0 || idsSize % 8 != 0 || idsSize > MaxCount * 8L)
                throw _r.Fail($"an ids section of whole 8-byte ids, found {idsSize} bytes");
            _r.Seek(idsOffset, "attr ids");
            var ids = new ulong[idsSize / 8];
            for (var i = 0; i < ids.Length; i++) ids[i] = _r.U64("sample id");
            _m.Attrs.Add(attr with { Ids = ids });
        }

        if (_m.Attrs.Count == 0) throw _r.Fail("at least one event attribute");
    }

    private void CheckData(long offset, long size)
    {
        if (offset < 0 || size < 0 || offset > _r.Length)
            throw new TraceFormatException(
                _r.File, 40, $"a data section inside the file, found offset {offset} size {size}");
        _m.DataOffset = offset;
        _m.DataSize = size;
        if (size <= _r.Length - offset) return;
        // perf writes the tracepoint formats (a feature section) after the data, so a cut file has none: its events
        // cannot be decoded at all, salvaging or not.
        throw new TraceFormatException(_r.File, offset,
            $"{size} bytes of data, but the file ends after {_r.Length - offset}: the perf.data is truncated, and its "
                + $"tracepoint formats, which perf writes after the data, are lost with the end (nothing to salvage)");
    }

    /// <summary>A perf_header_string: u32 length (padded), then NUL-terminated text.</summary>
    private string HeaderString(string what)
    {
        var len = _r.Length32(what, 1 << 16);
        var text = _r.Text(len, what);
        var nul = text.IndexOf('\0', StringComparison.Ordinal);
        return nul >= 0 ? text[..nul] : text;
    }

    /// <summary>
    /// HEADER_TRACING_DATA is the start of a trace-cmd v6 file: magic, version "0.6", endianness, long size, page
    /// size, header_page, header_event, ftrace and event format files, kallsyms, printk formats, saved cmdlines.
    /// </summary>
    private void ParseTracingData(long end)
    {
        for (var i = 0; i < TracingMagic.Length; i++)
            if (_r.U8("tracing data magic") != TracingMagic[i])
                throw _r.Fail("the tracing data magic \\x17\\x08\\x44tracing");
        var version = _r.CString("tracing data version", 16);
        if (_r.U8("endianness") != 0) throw _r.Fail("little-endian tracing data");
        _r.U8("long size");
        _r.U32("page size");
        _r.ExpectTag("header_page");
        _r.Skip(_r.Length64("header_page", MaxFormatText), "header_page");
        _r.ExpectTag("header_event");
        _r.Skip(_r.Length64("header_event", MaxFormatText), "header_event");
        var ftrace = Count("ftrace format count");
        for (var i = 0; i < ftrace; i++) AddFormat("ftrace");
        var systems = Count("event system count");
        for (var s = 0; s < systems; s++)
        {
            var system = _r.CString("event system name", 256);
            var count = Count($"event count of system {system}");
            for (var i = 0; i < count; i++) AddFormat(system);
        }

        _r.Skip(_r.Length32("kallsyms", end - _r.Position), "kallsyms");
        _r.Skip(_r.Length32("printk formats", end - _r.Position), "printk formats");
        if (string.CompareOrdinal(version, "0.6") >= 0 && _r.Position + 8 <= end)
            _m.Cmdlines = _r.Text(_r.Length64("saved cmdlines", end - _r.Position), "saved cmdlines");
        if (_r.Position > end) throw _r.Fail($"tracing data within its feature section ending at offset {end}");
    }

    private void AddFormat(string system)
    {
        var text = _r.Text(_r.Length64($"{system} event format", MaxFormatText), $"{system} event format");
        try
        {
            var format = FtraceEventFormat.Parse(text, system);
            if (format.Id is >= 0 and <= ushort.MaxValue) { _m.Formats.Add(format); return; }
        }
        catch (TraceFormatException)
        {
            // One unreadable format costs only its own events (decoded as unknown), as in trace.dat.
        }

        _m.SkippedFormats++;
    }

    private int Count(string what)
    {
        var n = _r.U32(what);
        if (n > MaxCount || n > _r.Remaining / 4)
            throw _r.Fail($"a {what} of at most {Math.Min(MaxCount, _r.Remaining / 4)}, found {n}");
        return (int)n;
    }
}
