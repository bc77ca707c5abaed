using System.Buffers.Binary;
using System.Globalization;
using System.Text;
using TraceLab.Core;
using TraceLab.Formats.Ftrace;

namespace TraceLab.Formats.TraceDat;

/// <summary>Parses the metadata of trace-cmd v6 files and uncompressed v7 files.</summary>
internal sealed class TraceDatMetadataParser
{
    // Bounds that no real trace.dat reaches; they stop a corrupt count from driving huge allocations or loops.
    private const int MaxFormatText = 1 << 20;
    private const int MaxCount = 1 << 20;
    private const long MaxCmdlines = 1L << 28;
    private const int MaxOptionSize = 1 << 24;

    private const int MaxSections = 4096;
    private const int MaxSectionBytes = 32 << 20;
    private const ushort SectionCompressed = 1;

    private readonly BoundedFileReader _file;
    private readonly bool _salvage;
    private readonly HashSet<ushort> _sectionsRead = new();
    private BoundedFileReader _r;
    private ChunkCodec? _codec;
    private readonly TraceDatMetadata _m = new();
    private readonly List<(string Name, long Offset)> _v6Buffers = new();
    private string _statsBuffer = "";

    private TraceDatMetadataParser(BoundedFileReader reader, bool salvage)
    {
        _file = reader;
        _r = reader;
        _salvage = salvage;
    }

    /// <param name="salvage">Cut CPU data ranges at the end of the file (recording the cut) instead of failing.</param>
    public static TraceDatMetadata Parse(BoundedFileReader reader, bool salvage = false) =>
        new TraceDatMetadataParser(reader, salvage).Run();

    private TraceDatMetadata Run()
    {
        Span<byte> magic = stackalloc byte[10];
        for (var i = 0; i < magic.Length; i++) magic[i] = _r.U8("trace.dat magic");
        if (!magic.SequenceEqual(TraceDatWriter.Magic))
        {
            _r.Seek(0, "magic"); throw _r.Fail(
            "the trace.dat magic \\x17\\x08\\x44tracing");
        }

        var versionText = _r.CString("file version", 16);
        if (!int.TryParse(versionText, NumberStyles.Integer, CultureInfo.InvariantCulture, out var version)
            || version is < 6 or > 7)
            throw _r.Fail($"file version 6 or 7, found '{versionText}'");
        _m.Version = version;
        if (_r.U8("endianness") != 0) throw _r.Fail("a little-endian file (big-endian trace.dat is not supported)");
        _r.U8("long size");
        var pageSize = _r.U32("page size");
        if (pageSize is < 256 or > 1 << 24)
            throw _r.Fail($"a page size between 256 bytes and 16 MiB, found {pageSize}");
        _m.PageSize = (int)pageSize;

        if (version == 6) ParseV6(); else ParseV7();

        if (_m.HeaderPage is null) throw _r.Fail("a header_page section");
        if (_m.HeaderPage.PageSize != _m.PageSize)
            throw _r.Fail($"header_page page size {_m.HeaderPage.PageSize} to match the file page size {_m.PageSize}");
        CheckDataRanges();
        return _m;
    }

    /// <summary>
    /// Data ranges must lie inside the file and not overlap, which also bounds the per-CPU read buffers by the file
    /// size. When salvaging, a range running past the end of the file is cut there and the cut is recorded.
    /// </summary>
    private void CheckDataRanges()
    {
        for (var i = 0; i < _m.Data.Count; i++)
        {
            var d = _m.Data[i];
            if (d.Offset < 0 || d.Size < 0)
                throw new TraceFormatException(_r.File, d.Offset,
                    $"CPU {d.Cpu} data at a non-negative offset and size, found offset {d.Offset} size {d.Size}");
            if (d.Offset <= _r.Length && d.Size <= _r.Length - d.Offset) continue;
            if (!_salvage)
                throw new TraceFormatException(
                    _r.File, d.Offset, $"CPU {d.Cpu} data of {d.Size} bytes inside the {_r.Length}-byte file");
            // Whole pages only: the partial page at the cut has lost its tail, and the kernel fills pages front to
            // back. A compressed stream keeps what is there; its chunk reader stops at the first chunk the cut damaged.
            var available = Math.Max(0, _r.Length - d.Offset);
            var kept = d.Compressed ? available : available / _m.PageSize * _m.PageSize;
            _m.Damage.Add(new DataDamage(d.Buffer, d.Cpu, d.Offset + kept, d.Offset + d.Size,
                $"expected CPU {d.Cpu} data up to offset {d.Offset + d.Size}, but the file ends at offset "
                    + $"{_r.Length}"));
            _m.Data[i] = d with { Size = kept };
        }

        var used = _m.Data.Where(d => d.Size > 0).OrderBy(d => d.Offset).ToList();
        for (var i = 1; i < used.Count; i++)
        {
            if (used[i].Offset < used[i - 1].Offset + used[i - 1].Size)
                throw new TraceFormatException(_r.File, used[i].Offset,
                    $"CPU {used[i].Cpu} data to start after CPU {used[i - 1].Cpu} data ends at offset "
                        + $"{used[i - 1].Offset + used[i - 1].Size}");
        }
    }

    private void ParseV6()
    {
        ParseHeaderInfo();
        ParseFtraceFormats();
        ParseEventFormats();
        _m.KallsymsAt = _r.Position;
        _r.Skip(_r.Length32("kallsyms", long.MaxValue), "kallsyms");
        _r.Skip(_r.Length32("printk formats", long.MaxValue), "printk formats");
        ParseCmdlines();
        var cpus = _r.U32("CPU count");
        if (cpus > 4096) throw _r.Fail($"a CPU count of at most 4096, found {cpus}");
        _m.CpuCount = (int)cpus;

        while (true)
        {
            var tag = _r.CString("section tag", 16);
            if (tag == "options  ")
            {
                ParseOptions(isV7: false);
                continue;
            }

            if (tag == "flyrecord")
            {
                _m.AddBuffer("");
                ParseV6Flyrecord("");
                break;
            }

            if (tag == "latency  ") throw _r.Fail("flyrecord data (latency-format trace.dat files are not supported)");
            throw _r.Fail($"'options', 'flyrecord' or 'latency' section tag, found '{tag}'");
        }

        foreach (var (name, offset) in _v6Buffers)
        {
            _r.Seek(offset, $"buffer '{name}' data");
            _r.ExpectTag("flyrecord");
            _m.AddBuffer(name);
            ParseV6Flyrecord(name);
        }
    }

    private void ParseV6Flyrecord(string buffer)
    {
        for (var cpu = 0; cpu < _m.CpuCount; cpu++)
        {
            var offset = (long)_r.U64("CPU data offset");
            var size = (long)_r.U64("CPU data size");
            _m.Data.Add(new CpuDataRange(buffer, cpu, offset, size));
        }
    }

    private void ParseV7()
    {
        var nameAt = _r.Position;
        var compression = _r.CString("compression name", 64);
        _r.CString("compression version", 64);
        _m.Compression = compression;
        _codec = ChunkCodec.For(compression, _r.File, nameAt);
        try
        {
            var next = (long)_r.U64("first options section offset");
            var visited = new HashSet<long>();
            while (next != 0)
            {
                // Distinct offsets bound the chain by the file length; the count bounds it by something sane.
                if (!visited.Add(next) || visited.Count > MaxSections)
                    throw _r.Fail($"an options chain of at most {MaxSections} sections without cycles " +
                        $"(offset {next} repeats)");
                next = InSection(next, TraceDatOptionId.Done, "options", () => ParseOptions(isV7: true));
            }
        }
        finally
        {
            _codec?.Dispose();
        }
    }

    /// <summary>
    /// Parses the v7 section at <paramref name="offset"/> with <paramref name="parse"/>, from the file or, when the
    /// section is compressed, from its decompressed bytes; then returns to where the reading was.
    /// </summary>
    private T InSection<T>(long offset, ushort id, string what, Func<T> parse)
    {
        var outer = _r;
        var resume = _file.Position;
        try
        {
            _file.Seek(offset, $"{what} section");
            var (flags, size) = SectionHeader(id, what);
            var end = _file.Position + size;
            if ((flags & SectionCompressed) == 0)
            {
                _r = _file;
                var result = parse();
                if (_file.Position > end) throw _file.Fail($"{what} within their section ending at offset {end}");
                return result;
            }

            _r = BoundedFileReader.OverSection(Decompress(offset, size, what), _file.File, offset);
            return parse();
        }
        finally
        {
            _r = outer;
            _file.Seek(resume, "options");
        }
    }

    /// <summary>The decompressed bytes of a compressed section whose header the file reader has just read.</summary>
    private byte[] Decompress(long sectionOffset, long size, string what)
    {
        if (_codec is null)
            throw new TraceFormatException(_file.File, sectionOffset,
                $"an uncompressed {what} section (the file header names no compression)");
        var compressedSize = _file.U32($"{what} compressed size");
        var plainSize = _file.U32($"{what} decompressed size");
        if (compressedSize > size - 8)
            throw new TraceFormatException(_file.File, sectionOffset,
                $"compressed {what} data of at most {size - 8} bytes (the section size), found {compressedSize}");
        if (plainSize > MaxSectionBytes)
            throw new TraceFormatException(_file.File, sectionOffset,
                $"a {what} section decompressing to at most {MaxSectionBytes} bytes, found {plainSize}");
        var compressed = _file.Bytes((int)compressedSize, $"compressed {what}");
        var plain = new byte[plainSize];
        _codec.Decompress(compressed, plain, _file.File, sectionOffset, $"the {what} section");
        return plain;
    }

    /// <summary>Reads a v7 section header at the file reader's position; returns its flags and data size.</summary>
    private (ushort Flags, long Size) SectionHeader(ushort expectedId, string what, bool checkSize = true)
    {
        var at = _file.Position;
        var id = _file.U16("section id");
        var flags = _file.U16("section flags");
        _file.U32("section description");
        var size = _file.U64("section size");
        if (id != expectedId) throw new TraceFormatException(_file.File, at,
            $"a {what} section (id {expectedId}), found id {id}");
        if (checkSize && size > (ulong)_file.Remaining)
            throw new TraceFormatException(_file.File, at,
                $"a {what} section of at most {_file.Remaining} bytes, found {size}");
        return (flags, (long)size);
    }

    /// <summary>Reads options up to DONE; returns the v7 next-options offset (0 for v6 or the last section).</summary>
    private long ParseOptions(bool isV7)
    {
        for (var n = 0; n < MaxCount; n++)
        {
            var id = _r.U16("option id");
            if (id == TraceDatOptionId.Done && !isV7) return 0;
            var size = _r.Length32("option data", MaxOptionSize);
            var dataStart = _r.Position;
            var data = _r.Bytes(size, "option data");
            switch (id)
            {
                case TraceDatOptionId.Done:
                    return size >= 8 ? (long)BinaryPrimitives.ReadUInt64LittleEndian(data) : 0;
                case TraceDatOptionId.CpuStat: ParseCpuStat(OptionText(data)); break;
                case TraceDatOptionId.TraceClock: _m.TraceClock = SelectedClock(OptionText(data)); break;
                case TraceDatOptionId.Uname: _m.Uname = OptionText(data).Trim(); break;
                case TraceDatOptionId.CpuCount when size >= 4:
                    _m.CpuCount =
                        Math.Max(_m.CpuCount, (int)Math.Min(4096, BinaryPrimitives.ReadUInt32LittleEndian(data)));
                    break;
                case TraceDatOptionId.Offset: ParseOffset(OptionText(data)); break;
                case TraceDatOptionId.Tsc2Nsec when size >= 16: ParseTsc2Nsec(data, dataStart); break;
                case TraceDatOptionId.TimeShift when size >= 16: ParseTimeShift(data, dataStart); break;
                case TraceDatOptionId.Buffer:
                    if (isV7) ParseV7Buffer(data, dataStart); else ParseV6Buffer(data, dataStart);
                    break;
                case TraceDatOptionId.BufferText when isV7 && data.Length > 8:
                    _m.TextBuffers.Add(CString(data, 8, dataStart, out _));
                    break;
                case >= TraceDatOptionId.HeaderInfo and <= TraceDatOptionId.Cmdlines when isV7 && size >= 8:
                    WithSection(id, (long)BinaryPrimitives.ReadUInt64LittleEndian(data));
                    break;
            }
        }

        throw _r.Fail($"an options list terminated within {MaxCount} entries");
    }

    private void WithSection(ushort id, long offset)
    {
        // Each metadata section is read once: a repeated option adds nothing and cannot multiply the work.
        if (id == TraceDatOptionId.Kallsyms && _m.KallsymsAt < 0) _m.KallsymsAt = offset;
        if (id is TraceDatOptionId.Kallsyms or TraceDatOptionId.Printk || !_sectionsRead.Add(id)) return;
        InSection(offset, id, $"section {id}", () =>
        {
            switch (id)
            {
                case TraceDatOptionId.HeaderInfo: ParseHeaderInfo(); break;
                case TraceDatOptionId.FtraceEvents: ParseFtraceFormats(); break;
                case TraceDatOptionId.EventFormats: ParseEventFormats(); break;
                case TraceDatOptionId.Cmdlines: ParseCmdlines(); break;
            }

            return 0;
        });
    }

    /// <summary>
    /// The recorded kernel's /proc/kallsyms text, read from where <see cref="TraceDatMetadata.KallsymsAt"/> says
    /// (decompressing a v7 section); null when the file has none.
    /// </summary>
    /// <exception cref="TraceFormatException">The section is damaged.</exception>
    public static string? Kallsyms(BoundedFileReader reader, TraceDatMetadata meta)
    {
        if (meta.KallsymsAt < 0) return null;
        var parser = new TraceDatMetadataParser(reader, salvage: false);
        string Text() => parser._r.Text(parser._r.Length32("kallsyms", MaxSectionBytes), "kallsyms");
        if (meta.Version == 6)
        {
            reader.Seek(meta.KallsymsAt, "kallsyms");
            return Text();
        }
        parser._codec = ChunkCodec.For(meta.Compression, reader.File, 0);
        return parser.InSection(meta.KallsymsAt, TraceDatOptionId.Kallsyms, "kallsyms", Text);
    }

    /// <summary>OFFSET: a decimal or 0x-prefixed number of nanoseconds added to every timestamp.</summary>
    private void ParseOffset(string text)
    {
        text = text.Trim();
        var hex = text.StartsWith("0x", StringComparison.OrdinalIgnoreCase);
        if (long.TryParse(hex ? text[2..] : text, hex ? NumberStyles.HexNumber : NumberStyles.Integer,
            CultureInfo.InvariantCulture, out var v))
            _m.Time.Offset += v;
    }

    private void ParseTsc2Nsec(byte[] data, long at)
    {
        var mult = BinaryPrimitives.ReadUInt32LittleEndian(data);
        var shift = BinaryPrimitives.ReadUInt32LittleEndian(data.AsSpan(4));
        if (shift > TimestampConversion.MaxShift)
            throw _r.Error(at + 4, $"a TSC2NSEC shift of at most {TimestampConversion.MaxShift}, found {shift}");
        _m.Time.SetTsc2Nsec(mult, (int)shift);
    }

    /// <summary>
    /// TIME_SHIFT: peer trace id (8), flags (4), CPU count (4), then per CPU a sample count and arrays of that many
    /// times, offsets and scaling ratios (8 bytes each); trace-cmd 3 appends a fraction-bits array per CPU after them.
    /// </summary>
    private void ParseTimeShift(byte[] data, long at)
    {
        var flags = BinaryPrimitives.ReadUInt32LittleEndian(data.AsSpan(8));
        var cpus = BinaryPrimitives.ReadUInt32LittleEndian(data.AsSpan(12));
        if (cpus > 4096) throw _r.Error(at + 12, $"a TIME_SHIFT CPU count of at most 4096, found {cpus}");
        var perCpu = new TimeShiftSamples[cpus];
        var p = 16;
        for (var cpu = 0; cpu < cpus; cpu++)
        {
            if (p + 4 > data.Length) throw _r.Error(at + p, $"TIME_SHIFT samples of CPU {cpu} within the option");
            var count = BinaryPrimitives.ReadUInt32LittleEndian(data.AsSpan(p));
            p += 4;
            if (count > (uint)(data.Length - p) / 24) throw _r.Error(at + p - 4,
                $"{count} TIME_SHIFT samples of 24 bytes within the option");
            var arrays = new long[3][];
            for (var a = 0; a < 3; a++)
            {
                arrays[a] = new long[count];
                for (var i = 0; i < count; i++,
                    p += 8) arrays[a][i] = BinaryPrimitives.ReadInt64LittleEndian(data.AsSpan(p));
            }

            perCpu[cpu] = new TimeShiftSamples(arrays[0], arrays[1], arrays[2]);
        }

        const uint interpolateFlag = 1;
        _m.Time.SetTimeShift(perCpu, (flags & interpolateFlag) != 0);
    }

    private void ParseV6Buffer(byte[] data, long at)
    {
        if (data.Length < 9) throw _r.Error(at, "a BUFFER option with an offset and a name");
        var offset = (long)BinaryPrimitives.ReadUInt64LittleEndian(data);
        _v6Buffers.Add((CString(data, 8, at, out _), offset));
    }

    private void ParseV7Buffer(byte[] data, long at)
    {
        if (data.Length < 9) throw _r.Error(at, "a BUFFER option with an offset and a name");
        var sectionOffset = (long)BinaryPrimitives.ReadUInt64LittleEndian(data);
        var name = CString(data, 8, at, out var p);
        var clock = CString(data, p, at, out p);
        if (clock.Length > 0) _m.BufferClocks[name] = clock;
        if (p + 8 > data.Length) throw _r.Error(at + p, "BUFFER page size and CPU count");
        var cpus = BinaryPrimitives.ReadUInt32LittleEndian(data.AsSpan(p + 4));
        p += 8;
        if (cpus > (uint)(data.Length - p) / 20) throw _r.Error(at + p,
            $"{cpus} CPU entries of 20 bytes within the BUFFER option");
        var compressed = cpus > 0 && BufferSectionCompressed(sectionOffset, name);
        _m.AddBuffer(name);
        for (var i = 0; i < cpus; i++, p += 20)
        {
            var cpuWord = BinaryPrimitives.ReadUInt32LittleEndian(data.AsSpan(p));
            if (cpuWord >= 4096) throw _r.Error(at + p,
                $"a CPU number below 4096 in the BUFFER option, found {cpuWord}");
            var cpu = (int)cpuWord;
            var offset = (long)BinaryPrimitives.ReadUInt64LittleEndian(data.AsSpan(p + 4));
            var size = (long)BinaryPrimitives.ReadUInt64LittleEndian(data.AsSpan(p + 12));
            _m.Data.Add(new CpuDataRange(name, cpu, offset, size, compressed));
            _m.CpuCount = Math.Max(_m.CpuCount, cpu + 1);
        }
    }

    /// <summary>
    /// Whether the BUFFER FLYRECORD section (id 3) the option points to is flagged compressed; its CPU data is then
    /// trace-cmd's chunk stream.
    /// </summary>
    private bool BufferSectionCompressed(long offset, string name)
    {
        var resume = _file.Position;
        try
        {
            _file.Seek(offset, $"buffer '{name}' section");
            // Only the flags matter here: the CPU ranges in the option say where the data is, and a salvaging read
            // of a cut file must still learn that its data is compressed.
            var (flags, _) = SectionHeader(TraceDatOptionId.Buffer, $"buffer '{name}' flyrecord", checkSize: false);
            if ((flags & SectionCompressed) == 0) return false;
            if (_codec is null)
                throw new TraceFormatException(_file.File, offset,
                    $"buffer '{name}' data not flagged compressed (the file header names no compression)");
            return true;
        }
        finally
        {
            _file.Seek(resume, "options");
        }
    }

    private string CString(byte[] data, int start, long at, out int next)
    {
        var nul = start < data.Length ? Array.IndexOf(data, (byte)0, start) : -1;
        if (nul < 0) throw _r.Error(at + start, "a NUL-terminated string in the option");
        next = nul + 1;
        return Encoding.UTF8.GetString(data, start, nul - start);
    }

    private static string OptionText(byte[] data)
    {
        var nul = Array.IndexOf(data, (byte)0);
        return Encoding.UTF8.GetString(data, 0, nul >= 0 ? nul : data.Length);
    }

    /// <summary>trace_clock lists every clock with the one in use in brackets.</summary>
    internal static string SelectedClock(string text)
    {
        var open = text.IndexOf('[');
        var close = open >= 0 ? text.IndexOf(']', open) : -1;
        return close > open && open >= 0 ? text[(open + 1)..close] : text.Trim();
    }

    private void ParseCpuStat(string text)
    {
        const string bufferPrefix = "Buffer:";
        var trimmed = text.Trim();
        if (trimmed.StartsWith(bufferPrefix, StringComparison.Ordinal))
        {
            _statsBuffer = trimmed[bufferPrefix.Length..].Trim();
            return;
        }

        var cpu = -1;
        long lost = 0;
        foreach (var line in text.Split('\n'))
        {
            var colon = line.IndexOf(':');
            if (colon <= 0) continue;
            var key = line[..colon].Trim();
            var value = line[(colon + 1)..].Trim();
            if (!long.TryParse(value, NumberStyles.Integer, CultureInfo.InvariantCulture, out var v)) continue;
            if (key == "CPU") cpu = (int)v;
            else if (key is "overrun" or "commit overrun" or "dropped events") lost += v;
        }

        if (cpu < 0) return;
        if (!_m.LostByBuffer.TryGetValue(_statsBuffer, out var perCpu)) _m.LostByBuffer[_statsBuffer] = perCpu =
            new Dictionary<int, long>();
        perCpu[cpu] = lost;
    }

    private void ParseHeaderInfo()
    {
        _r.ExpectTag("header_page");
        var at = _r.Position;
        var text = _r.Text(_r.Length64("header_page", MaxFormatText), "header_page");
        try
        {
            _m.HeaderPage = HeaderPageLayout.Parse(text);
        }
        catch (TraceFormatException e)
        {
            // Unlike an event format, no event can be read without the page layout; the error must name the file.
            throw _r.Error(at, $"a header_page text the reader understands ({e.Message})");
        }
        _r.ExpectTag("header_event");
        _r.Skip(_r.Length64("header_event", MaxFormatText), "header_event");
    }

    private void ParseFtraceFormats()
    {
        var count = Count("ftrace format count");
        for (var i = 0; i < count; i++) AddFormat("ftrace");
    }

    private void ParseEventFormats()
    {
        var systems = Count("event system count");
        for (var s = 0; s < systems; s++)
        {
            var system = _r.CString("event system name", 256);
            var count = Count($"event count of system {system}");
            for (var i = 0; i < count; i++) AddFormat(system);
        }
    }

    private void AddFormat(string system)
    {
        var text = _r.Text(_r.Length64($"{system} event format", MaxFormatText), $"{system} event format");
        // The length framing is intact, so one format the parser cannot read costs only its own events (decoded as
        // unknown), not the whole trace.
        FtraceEventFormat format;
        try
        {
            format = FtraceEventFormat.Parse(text, system);
        }
        catch (TraceFormatException)
        {
            _m.SkippedFormats++;
            return;
        }

        if (format.Id is < 0 or > ushort.MaxValue)
        {
            _m.SkippedFormats++;
            return;
        }

        _m.Formats.Add(format);
    }

    private void ParseCmdlines() => _m.Cmdlines = _r.Text(_r.Length64("saved cmdlines", MaxCmdlines), "saved cmdlines");

    private int Count(string what)
    {
        var n = _r.U32(what);
        // Every counted item takes at least 8 bytes, so a count beyond that is corrupt whatever the limit.
        if (n > MaxCount || n > _r.Remaining / 4)
            throw _r.Fail($"a {what} of at most {Math.Min(MaxCount, _r.Remaining / 4)}, found {n}");
        return (int)n;
    }
}
