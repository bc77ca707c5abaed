using System.Buffers.Binary;
using System.Text;

namespace TraceLab.Formats.Symbols.Dwarf;

/// <summary>A source position: the file (with its directory when the table gives one) and the line.</summary>
public readonly record struct SourceLine(string File, int Line)
{
    /// <summary>"file.c:41": the file's name without its directory, as call sites show it.</summary>
    public string Short =>
        System.IO.Path.GetFileName(File) + ":" + Line.ToString(System.Globalization.CultureInfo.InvariantCulture);
}

/// <summary>
/// The line number table of an ELF file's .debug_line (DWARF 2–5, 32- and 64-bit units; DWARF 5's directory and
/// file entry formats with .debug_line_str and .debug_str strings): every row of every sequence, sorted by address,
/// so that an address finds its file and line by binary search. Written by hand: no served package reads DWARF 5
/// (docs/dependencies.md). A unit it cannot read is skipped and counted; nothing here throws for damaged bytes.
/// </summary>
public sealed class DwarfLineTable
{
    private readonly ulong[] _addresses;
    private readonly int[] _files;
    private readonly int[] _lines;
    private readonly string[] _names;
    /// <summary>Per unit (its offset in .debug_line): its file numbers' names (ids into the names).</summary>
    private readonly Dictionary<long, int[]> _unitFiles;

    private DwarfLineTable(ulong[] addresses, int[] files, int[] lines, string[] names,
        Dictionary<long, int[]> unitFiles, int damaged)
    {
        (_addresses, _files, _lines, _names, _unitFiles, DamagedUnits) =
            (addresses, files, lines, names, unitFiles, damaged);
    }

    /// <summary>
    /// The file that number <paramref name="index"/> names in the unit at <paramref name="unitOffset"/> of
    /// .debug_line (a compilation unit's DW_AT_stmt_list: how its DW_AT_call_file values count); null if none.
    /// </summary>
    public string? FileOf(long unitOffset, ulong index) =>
        _unitFiles.TryGetValue(unitOffset, out var files) && index < (ulong)files.Length ? _names[files[index]] : null;

    /// <summary>Rows kept (each starts an address range of one file and line; line −1: a sequence's end).</summary>
    public int Rows => _addresses.Length;

    /// <summary>Units that could not be read (a damaged header or program).</summary>
    public int DamagedUnits { get; }

    /// <summary>The file and line of link-time address <paramref name="address"/>; null outside sequences.</summary>
    public SourceLine? Find(ulong address)
    {
        var found = SortedAddresses.LastAtOrBelow(_addresses, address);

        if (found < 0 || _lines[found] < 0) return null;
        return new SourceLine(_names[_files[found]], _lines[found]);
    }

    /// <summary>Reads <paramref name="debugLine"/>, with the string sections its DWARF 5 units refer to.</summary>
    public static DwarfLineTable Read(byte[] debugLine, byte[]? debugLineStr, byte[]? debugStr)
    {
        var rows = new List<(ulong Address, int File, int Line)>();
        var unitFiles = new Dictionary<long, int[]>();
        var names = new List<string>();
        var nameIds = new Dictionary<string, int>(StringComparer.Ordinal);
        var damaged = 0;
        var p = 0;
        while (p + 4 <= debugLine.Length)
        {
            var start = p;
            try
            {
                var unitEnd = ReadUnit(debugLine, p, debugLineStr, debugStr, rows, names, nameIds, unitFiles);
                if (unitEnd <= start) break;
                p = unitEnd;
            }
            catch (DwarfException)
            {
                damaged++;
                break; // the next unit's start is known only from this one's length: stop
            }
        }

        // Stable, a sequence's end before a row at the same address: the last row at or below an address is its line
        // (the program's last one where several share it), and a sequence starting where another ends is found.
        var sorted = rows.OrderBy(r => r.Address).ThenBy(r => r.Line < 0 ? 0 : 1).ToArray();
        return new DwarfLineTable([.. sorted.Select(r => r.Address)], [.. sorted.Select(r => r.File)],
            [.. sorted.Select(r => r.Line)], [.. names], unitFiles, damaged);
    }

    private static int ReadUnit(byte[] data, int at, byte[]? lineStr, byte[]? str,
        List<(ulong, int, int)> rows, List<string> names, Dictionary<string, int> nameIds,
        Dictionary<long, int[]> unitFiles)
    {
        var r = DwarfReader.Unit(data, at, out var offsetSize, out var end);
        var version = r.U16();
        if (version is < 2 or > 5) return end;
        var addressSize = 8;
        if (version >= 5)
        {
            addressSize = r.U8();
            r.U8(); // segment selector size
        }

        var headerLength = offsetSize == 8 ? r.U64() : r.U32();
        if (headerLength > (ulong)(end - r.Position)) throw new DwarfException();
        var program = r.Position + (int)headerLength;
        var minInstruction = r.U8();
        if (version >= 4) r.U8(); // maximum operations per instruction (VLIW only)
        r.U8(); // default_is_stmt: every row is kept, statement or not
        var lineBase = (sbyte)r.U8();
        var lineRange = r.U8();
        var opcodeBase = r.U8();
        if (lineRange == 0) throw new DwarfException();
        Span<byte> lengths = stackalloc byte[256];
        for (var i = 1; i < opcodeBase; i++) lengths[i] = r.U8();

        // File names, as this unit numbers them (DWARF 5 from 0, earlier from 1).
        var files = new List<int>();
        if (version >= 5)
        {
            var directories = EntryList(ref r, offsetSize, lineStr, str, out _);
            // Directory 0 is the compilation directory; the others are relative to it unless absolute.
            for (var d = 1; d < directories.Count; d++) directories[d] = Join(directories[0], directories[d]);
            var fileEntries = EntryList(ref r, offsetSize, lineStr, str, out var directoryIndexes);
            for (var i = 0; i < fileEntries.Count; i++)
            {
                var d = directoryIndexes[i];
                files.Add(Name(Join(d >= 0 && d < directories.Count ? directories[d] : "", fileEntries[i]), names,
                    nameIds));
            }
        }
        else
        {
            var directories = new List<string> { "" };
            while (true)
            {
                var d = r.CString();
                if (d.Length == 0) break;
                directories.Add(d);
            }

            files.Add(Name("", names, nameIds)); // index 0: unused before DWARF 5
            while (true)
            {
                var f = r.CString();
                if (f.Length == 0) break;
                var d = (int)Math.Min(r.Uleb(), int.MaxValue);
                r.Uleb();
                r.Uleb();
                files.Add(Name(Join(d < directories.Count ? directories[d] : "", f), names, nameIds));
            }
        }

        unitFiles[at] = [.. files];
        r = new DwarfReader(data, program, end);
        ulong address = 0;
        int file = version >= 5 ? 0 : 1, line = 1;
        void Emit(ulong a, int f, int l) =>
            rows.Add((a, f >= 0 && f < files.Count ? files[f] : Name("", names, nameIds), l));
        while (r.Position < end)
        {
            var op = r.U8();
            if (op >= opcodeBase)
            {
                var adjusted = op - opcodeBase;
                address += (ulong)(adjusted / lineRange * minInstruction);
                line += lineBase + adjusted % lineRange;
                Emit(address, file, line);
                continue;
            }

            switch (op)
            {
                case 0: // extended
                    {
                        var size = (int)Math.Min(r.Uleb(), int.MaxValue);
                        if (size == 0) break;
                        var next = r.Position + size;
                        var sub = r.U8();
                        if (sub == 1) // end_sequence: the range ends here
                        {
                            rows.Add((address, 0, -1));
                            address = 0;
                            file = version >= 5 ? 0 : 1;
                            line = 1;
                        }
                        else if (sub == 2) address = addressSize == 4 ? r.U32() : r.U64();
                        r.Seek(next);
                        break;
                    }
                case 1: // copy
                    Emit(address, file, line);
                    break;
                case 2: // advance_pc
                    address += r.Uleb() * minInstruction;
                    break;
                case 3: // advance_line
                    line += (int)r.Sleb();
                    break;
                case 4: // set_file
                    file = (int)Math.Min(r.Uleb(), int.MaxValue);
                    break;
                case 8: // const_add_pc
                    address += (ulong)((255 - opcodeBase) / lineRange * minInstruction);
                    break;
                case 9: // fixed_advance_pc
                    address += r.U16();
                    break;
                default: // set_column, negate_stmt, …: skip their operands
                    for (var i = 0; i < lengths[op]; i++) r.Uleb();
                    break;
            }
        }

        return end;
    }

    /// <summary>A DWARF 5 directory or file entry list: the paths, each entry's directory index (-1: none).</summary>
    private static List<string> EntryList(ref DwarfReader r, int offsetSize, byte[]? lineStr, byte[]? str,
        out List<int> directoryIndexes)
    {
        var formatCount = r.U8();
        Span<(ulong Type, ulong Form)> formats = stackalloc (ulong, ulong)[formatCount];
        for (var i = 0; i < formatCount; i++) formats[i] = (r.Uleb(), r.Uleb());
        var count = r.Uleb();
        if (count > 1_000_000) throw new DwarfException();
        var paths = new List<string>();
        directoryIndexes = [];
        for (ulong e = 0; e < count; e++)
        {
            string path = "";
            var directory = -1;
            foreach (var (type, form) in formats)
            {
                var value = Form(ref r, form, offsetSize, lineStr, str, out var text);
                if (type == 1) path = text ?? "";
                else if (type == 2) directory = (int)Math.Min(value, int.MaxValue);
            }

            paths.Add(path);
            directoryIndexes.Add(directory);
        }

        return paths;
    }

    /// <summary>One value of form <paramref name="form"/>: its number, or its text for string forms.</summary>
    private static ulong Form(ref DwarfReader r, ulong form, int offsetSize, byte[]? lineStr, byte[]? str,
        out string? text)
    {
        text = null;
        switch (form)
        {
            case 0x08: // string
                text = r.CString();
                return 0;
            case 0x1f: // line_strp
            case 0x0e: // strp
                {
                    var offset = offsetSize == 8 ? r.U64() : r.U32();
                    text = CStringAt(form == 0x1f ? lineStr : str, offset);
                    return 0;
                }
            case 0x0b: return r.U8(); // data1
            case 0x05: return r.U16(); // data2
            case 0x06: return r.U32(); // data4
            case 0x07: return r.U64(); // data8
            case 0x0f: return r.Uleb(); // udata
            case 0x1e: // data16 (MD5)
                r.Skip(16);
                return 0;
            case 0x09: // block
                r.Skip((long)Math.Min(r.Uleb(), int.MaxValue));
                return 0;
            default:
                throw new DwarfException();
        }
    }

    private static string CStringAt(byte[]? section, ulong offset)
    {
        if (section is null || offset >= (ulong)section.Length) return "";
        var rest = section.AsSpan((int)offset);
        var nul = rest.IndexOf((byte)0);
        return Encoding.UTF8.GetString(nul < 0 ? rest : rest[..nul]);
    }

    private static string Join(string directory, string file) =>
        directory.Length == 0 || file.StartsWith('/') ? file : directory.TrimEnd('/') + "/" + file;

    private static int Name(string name, List<string> names, Dictionary<string, int> ids)
    {
        if (ids.TryGetValue(name, out var id)) return id;
        ids[name] = names.Count;
        names.Add(name);
        return names.Count - 1;
    }
}
