using System.Buffers.Binary;
using System.Text;
using TraceLab.Formats.Ftrace;

namespace TraceLab.Formats.TraceDat;

/// <summary>
/// Writes a little-endian trace-cmd v6 trace.dat in flyrecord mode. CPU data files are streamed into the output
/// page-aligned, so memory use does not depend on trace size.
/// </summary>
public static class TraceDatWriter
{
    internal static ReadOnlySpan<byte> Magic =>
        [0x17, 0x08, 0x44, (byte)'t', (byte)'r', (byte)'a', (byte)'c', (byte)'i', (byte)'n', (byte)'g'];

    public static void Write(string path, TraceDatContents contents)
    {
        using var fs = new FileStream(path, FileMode.Create, FileAccess.Write, FileShare.None, 1 << 16);
        Write(fs, contents);
        // Callers rename the file into place once this returns, so the data must be on disk first; a full disk that
        // some file systems report only at this point then fails the write instead of leaving a short trace.dat.
        fs.Flush(flushToDisk: true);
    }

    /// <exception cref="ArgumentException">
    /// A CPU data file is not a whole number of pages, or header_page is invalid.
    /// </exception>
    public static void Write(Stream output, TraceDatContents contents)
    {
        var layout = HeaderPageLayout.Parse(contents.HeaderPage);
        var pageSize = layout.PageSize;
        var cpuCount = contents.CpuCount;
        var sizes = new long[cpuCount];
        for (var cpu = 0; cpu < cpuCount; cpu++)
        {
            sizes[cpu] = new FileInfo(contents.CpuDataFiles[cpu]).Length;
            if (sizes[cpu] % pageSize != 0)
                throw new ArgumentException($"{contents.CpuDataFiles[cpu]}: length {sizes[cpu]} is not a multiple of "
                    + $"the {pageSize}-byte page size", nameof(contents));
        }

        var w = new Writer(output);
        w.Bytes(Magic);
        w.CString("6");
        w.Byte(0); // little endian
        w.Byte(8); // userspace long size
        w.U32((uint)pageSize);

        w.CString("header_page");
        w.Blob64(contents.HeaderPage);
        w.CString("header_event");
        w.Blob64(contents.HeaderEvent);

        w.U32((uint)contents.FtraceFormats.Count);
        foreach (var f in contents.FtraceFormats) w.Blob64(f);

        w.U32((uint)contents.EventFormats.Count);
        foreach (var (system, formats) in contents.EventFormats)
        {
            w.CString(system);
            w.U32((uint)formats.Count);
            foreach (var f in formats) w.Blob64(f);
        }

        w.Blob32(contents.Kallsyms);
        w.Blob32(contents.PrintkFormats);
        w.Blob64(contents.SavedCmdlines);
        w.U32((uint)cpuCount);

        w.Tag("options  ");
        w.Option(TraceDatOptionId.TraceClock, ClockOptionText(contents.TraceClock));
        if (contents.Uname is { } uname) w.Option(TraceDatOptionId.Uname, uname);
        for (var cpu = 0; cpu < cpuCount; cpu++)
        {
            var stats = cpu < contents.CpuStats.Count ? contents.CpuStats[cpu] : "";
            w.Option(TraceDatOptionId.CpuStat, $"CPU: {cpu}\n{stats}");
        }

        var count = new byte[4];
        BinaryPrimitives.WriteUInt32LittleEndian(count, (uint)cpuCount);
        w.Option(TraceDatOptionId.CpuCount, count);
        w.U16(TraceDatOptionId.Done);

        w.Tag("flyrecord");
        var offset = Align(w.Position + (16L * cpuCount), pageSize);
        var offsets = new long[cpuCount];
        for (var cpu = 0; cpu < cpuCount; cpu++)
        {
            offsets[cpu] = offset;
            w.U64((ulong)offset);
            w.U64((ulong)sizes[cpu]);
            offset = Align(offset + sizes[cpu], pageSize);
        }

        for (var cpu = 0; cpu < cpuCount; cpu++)
        {
            w.Zeros(offsets[cpu] - w.Position);
            using var input = new FileStream(contents.CpuDataFiles[cpu], FileMode.Open, FileAccess.Read,
                FileShare.ReadWrite, 1 << 16, FileOptions.SequentialScan);
            var copied = w.CopyFrom(input);
            if (copied != sizes[cpu])
                throw new IOException($"{contents.CpuDataFiles[cpu]} changed size while being written ({sizes[cpu]} "
                    + $"then {copied} bytes)");
        }

        output.Flush();
    }

    /// <summary>trace-cmd takes the clock in use from the [bracketed] entry of the trace_clock file text.</summary>
    private static string ClockOptionText(string clock)
    {
        clock = clock.Trim();
        if (clock.Length == 0) clock = "local";
        return (clock.Contains('[', StringComparison.Ordinal) ? clock : $"[{clock}]") + "\n";
    }

    private static long Align(long value, int page) => (value + page - 1) / page * page;

    /// <summary>
    /// Little-endian primitives over a stream, tracking the position so alignment works on unseekable streams.
    /// </summary>
    private sealed class Writer(Stream s)
    {
        private readonly byte[] _scratch = new byte[1 << 16];

        public long Position { get; private set; }

        public void Bytes(ReadOnlySpan<byte> b)
        {
            s.Write(b);
            Position += b.Length;
        }

        public void Byte(byte b) => Bytes([b]);

        public void U16(ushort v)
        {
            Span<byte> b = stackalloc byte[2];
            BinaryPrimitives.WriteUInt16LittleEndian(b, v);
            Bytes(b);
        }

        public void U32(uint v)
        {
            Span<byte> b = stackalloc byte[4];
            BinaryPrimitives.WriteUInt32LittleEndian(b, v);
            Bytes(b);
        }

        public void U64(ulong v)
        {
            Span<byte> b = stackalloc byte[8];
            BinaryPrimitives.WriteUInt64LittleEndian(b, v);
            Bytes(b);
        }

        public void CString(string text)
        {
            Bytes(Encoding.UTF8.GetBytes(text));
            Byte(0);
        }

        /// <summary>A 10-byte section tag such as "options  \0".</summary>
        public void Tag(string nineChars) => CString(nineChars);

        public void Blob64(string text)
        {
            var bytes = Encoding.UTF8.GetBytes(text);
            U64((ulong)bytes.Length);
            Bytes(bytes);
        }

        public void Blob32(string text)
        {
            var bytes = Encoding.UTF8.GetBytes(text);
            U32((uint)bytes.Length);
            Bytes(bytes);
        }

        public void Option(ushort id, string text)
        {
            var bytes = Encoding.UTF8.GetBytes(text + "\0");
            Option(id, bytes);
        }

        public void Option(ushort id, byte[] data)
        {
            U16(id);
            U32((uint)data.Length);
            Bytes(data);
        }

        public void Zeros(long count)
        {
            Array.Clear(_scratch);
            while (count > 0)
            {
                var n = (int)Math.Min(count, _scratch.Length);
                Bytes(_scratch.AsSpan(0, n));
                count -= n;
            }
        }

        public long CopyFrom(Stream input)
        {
            long total = 0;
            int n;
            while ((n = input.Read(_scratch, 0, _scratch.Length)) > 0)
            {
                Bytes(_scratch.AsSpan(0, n));
                total += n;
            }

            return total;
        }
    }
}
