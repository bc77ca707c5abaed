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

    private readonly BoundedFileReader _r;
    private readonly bool _salvage;
    private readonly TraceDatMetadata _m = new();
    private readonly List<(string Name, long Offset)> _v6Buffers = new();
    private string _statsBuffer = "";

    private TraceDatMetadataParser(BoundedFileReader reader, bool salvage)
    {
        _r = reader;
        _salvage = salvage;
    }

    /// <param name="salvage">Cut CPU data ranges at the end of the file (recording the cut) instead of failing.</param>
    public static TraceDatMetadata Parse(BoundedFileReader reader, bool salvage = false) => new TraceDatMetadataParser(reader, salvage).Run();

    private TraceDatMetadata Run()
    {
        Span<byte> magic = stackalloc byte[10];
        for (var i = 0; i < magic.Length; i++) magic[i] = _r.U8("trace.dat magic");
        if (!magic.SequenceEqual(TraceDatWriter.Magic)) { _r.Seek(0, "magic"); throw _r.Fail("the trace.dat magic \\x17\\x08\\x44tracing"); }

        var versionText = _r.CString("file version", 16);
        if (!int.TryParse(versionText, NumberStyles.Integer, CultureInfo.InvariantCulture, out var version) || version is < 6 or > 7)
            throw _r.Fail($"file version 6 or 7, found '{versionText}'");
        _m.Version = version;
        if (_r.U8("endianness") != 0) throw _r.Fail("a little-endian file (big-endian trace.dat is not supported)");
        _r.U8("long size");
        var pageSize = _r.U32("page size");
        if (pageSize is < 256 or > 1 << 24) throw _r.Fail($"a page size between 256 bytes and 16 MiB, found {pageSize}");
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
                throw new TraceFormatException(_r.File, d.Offset, $"CPU {d.Cpu} data at a non-negative offset and size, found offset {d.Offset} size {d.Size}");
            if (d.Offset <= _r.Length && d.Size <= _r.Length - d.Offset) continue;
            if (!_salvage)
                throw new TraceFormatException(_r.File, d.Offset, $"CPU {d.Cpu} data of {d.Size} bytes inside the {_r.Length}-byte file");
            // Whole pages only: the partial page at the cut has lost its tail, and the kernel fills pages front to back.
            var kept = Math.Max(0, _r.Length - d.Offset) / _m.PageSize * _m.PageSize;
            _m.Damage.Add(new DataDamage(d.Buffer, d.Cpu, d.Offset + kept, d.Offset + d.Size,
                $"expected CPU {d.Cpu} data up to offset {d.Offset + d.Size}, but the file ends at offset {_r.Length}"));
            _m.Data[i] = d with { Size = kept };
        }

        var used = _m.Data.Where(d => d.Size > 0).OrderBy(d => d.Offset).ToList();
        for (var i = 1; i < used.Count; i++)
        {
            if (used[i].Offset < used[i - 1].Offset + used[i - 1].Size)
                throw new TraceFormatException(_r.File, used[i].Offset,
                    $"CPU {used[i].Cpu} data to start after CPU {used[i - 1].Cpu} data ends at offset {used[i - 1].Offset + used[i - 1].Size}");
        }
    }

    private void ParseV6()
    {
        ParseHeaderInfo();
        ParseFtraceFormats();
        ParseEventFormats();
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
        var compression = _r.CString("compression name", 64);
        _r.CString("compression version", 64);
        if (compression != "none")
            throw new TraceFormatException(_r.File, _r.Position,
                $"compressed trace.dat v7 is not supported (compression '{compression}'); convert it with 'trace-cmd convert --compression none'");
        var next = (long)_r.U64("first options section offset");
        var visited = new HashSet<long>();
        while (next != 0)
        {
            if (!visited.Add(next)) throw _r.Fail($"an options chain without cycles (offset {next} repeats)");
            _r.Seek(next, "options section");
            var size = SectionHeader(0, "options");
            var end = _r.Position + size;
            next = ParseOptions(isV7: true);
            if (_r.Position > end) throw _r.Fail($"options within their section ending at {end}");
        }
    }

    /// <summary>Reads a v7 section header and returns the section's data size.</summary>
    private long SectionHeader(ushort expectedId, string what)
    {
        var at = _r.Position;
        var id = _r.U16("section id");
        var flags = _r.U16("section flags");
        _r.U32("section description");
        var size = (long)_r.U64("section size");
        if (id != expectedId) throw new TraceFormatException(_r.File, at, $"a {what} section (id {expectedId}), found id {id}");
        if ((flags & 1) != 0) throw new TraceFormatException(_r.File, at, $"an uncompressed {what} section (compressed trace.dat v7 is not supported)");
        if (size > _r.Remaining) throw new TraceFormatException(_r.File, at, $"a {what} section of at most {_r.Remaining} bytes, found {size}");
        return size;
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
                    _m.CpuCount = Math.Max(_m.CpuCount, (int)Math.Min(4096, BinaryPrimitives.ReadUInt32LittleEndian(data)));
                    break;
                case TraceDatOptionId.Buffer:
                    if (isV7) ParseV7Buffer(data, dataStart); else ParseV6Buffer(data, dataStart);
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
        var resume = _r.Position;
        _r.Seek(offset, $"section {id}");
        SectionHeader(id, $"section {id}");
        switch (id)
        {
            case TraceDatOptionId.HeaderInfo: ParseHeaderInfo(); break;
            case TraceDatOptionId.FtraceEvents: ParseFtraceFormats(); break;
            case TraceDatOptionId.EventFormats: ParseEventFormats(); break;
            case TraceDatOptionId.Cmdlines: ParseCmdlines(); break;
        }

        _r.Seek(resume, "options");
    }

    private void ParseV6Buffer(byte[] data, long at)
    {
        if (data.Length < 9) throw new TraceFormatException(_r.File, at, "a BUFFER option with an offset and a name");
        var offset = (long)BinaryPrimitives.ReadUInt64LittleEndian(data);
        _v6Buffers.Add((CString(data, 8, at, out _), offset));
    }

    private void ParseV7Buffer(byte[] data, long at)
    {
        if (data.Length < 9) throw new TraceFormatException(_r.File, at, "a BUFFER option with an offset and a name");
        var name = CString(data, 8, at, out var p);
        var clock = CString(data, p, at, out p);
        if (clock.Length > 0) _m.TraceClock ??= clock;
        if (p + 8 > data.Length) throw new TraceFormatException(_r.File, at + p, "BUFFER page size and CPU count");
        var cpus = BinaryPrimitives.ReadUInt32LittleEndian(data.AsSpan(p + 4));
        p += 8;
        if (cpus > (uint)(data.Length - p) / 20) throw new TraceFormatException(_r.File, at + p, $"{cpus} CPU entries of 20 bytes within the BUFFER option");
        for (var i = 0; i < cpus; i++, p += 20)
        {
            var cpuWord = BinaryPrimitives.ReadUInt32LittleEndian(data.AsSpan(p));
            if (cpuWord >= 4096) throw new TraceFormatException(_r.File, at + p, $"a CPU number below 4096 in the BUFFER option, found {cpuWord}");
            var cpu = (int)cpuWord;
            var offset = (long)BinaryPrimitives.ReadUInt64LittleEndian(data.AsSpan(p + 4));
            var size = (long)BinaryPrimitives.ReadUInt64LittleEndian(data.AsSpan(p + 12));
            _m.Data.Add(new CpuDataRange(name, cpu, offset, size));
            _m.CpuCount = Math.Max(_m.CpuCount, cpu + 1);
        }
    }

    private string CString(byte[] data, int start, long at, out int next)
    {
        var nul = Array.IndexOf(data, (byte)0, start);
        if (nul < 0) throw new TraceFormatException(_r.File, at + start, "a NUL-terminated string in the option");
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
        if (!_m.LostByBuffer.TryGetValue(_statsBuffer, out var perCpu)) _m.LostByBuffer[_statsBuffer] = perCpu = new Dictionary<int, long>();
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
            throw new TraceFormatException(_r.File, at, $"a header_page text the reader understands ({e.Message})");
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
        if (n > MaxCount || n > _r.Remaining / 4) throw _r.Fail($"a {what} of at most {Math.Min(MaxCount, _r.Remaining / 4)}, found {n}");
        return (int)n;
    }
}
