using ELFSharp.ELF;
using ELFSharp.ELF.Sections;
using ELFSharp.ELF.Segments;

namespace TraceLab.Formats.Symbols;

/// <summary>A named address range of an ELF file: a function or a data object (st_value, st_size).</summary>
/// <param name="Start">The symbol's address (link-time, before the load bias).</param>
/// <param name="Size">Its size; a function of size 0 reaches to the next function, as perf takes it.</param>
/// <param name="Name">The symbol's name.</param>
public readonly record struct ElfSymbol(ulong Start, ulong Size, string Name);

/// <summary>One PT_LOAD segment: where file bytes (and, past them, the zero-filled .bss) are mapped.</summary>
/// <param name="Address">p_vaddr.</param>
/// <param name="Offset">p_offset.</param>
/// <param name="FileSize">p_filesz.</param>
/// <param name="MemorySize">p_memsz (larger than the file part when .bss follows).</param>
public readonly record struct ElfLoad(ulong Address, ulong Offset, ulong FileSize, ulong MemorySize);

/// <summary>
/// What TraceLab needs of an ELF file to name addresses, read once with ELFSharp: its build-id, .gnu_debuglink,
/// PT_LOAD segments (the load bias of a PIE or shared library, and where an anonymous .bss lies), function symbols
/// and data objects from .symtab (or .dynsym when stripped). A file ELFSharp cannot read, or that is not 64-bit,
/// gives null with the reason: its frames are then named module+offset.
/// </summary>
public sealed class ElfSymbols
{
    private ElfSymbol[] _functions = [];
    private ElfSymbol[] _objects = [];
    private ElfSymbol[] _pltEntries = [];

    private ElfSymbols(string path) => Path = path;

    /// <summary>The file read.</summary>
    public string Path { get; }

    /// <summary>The GNU build-id note; null when the file has none.</summary>
    public byte[]? BuildId { get; private set; }

    /// <summary>The file name in .gnu_debuglink; null when none.</summary>
    public string? DebugLink { get; private set; }

    /// <summary>The PT_LOAD segments, in file order.</summary>
    public IReadOnlyList<ElfLoad> Loads { get; private set; } = [];

    private (byte[] Bytes, ulong Address)? _ehFrame;
    private Unwind.CallFrameInfo? _callFrames;

    /// <summary>
    /// The call frame information of .eh_frame (to unwind copied stacks), indexed on first use (naming frames needs
    /// none); null when the file has none.
    /// </summary>
    public Unwind.CallFrameInfo? CallFrames =>
        _callFrames ??= _ehFrame is { } eh ? Unwind.CallFrameInfo.Read(eh.Bytes, eh.Address) : null;

    /// <summary>True when the symbols came from .symtab (not only .dynsym).</summary>
    public bool HasSymtab { get; private set; }

    /// <summary>Function symbols, by address.</summary>
    public IReadOnlyList<ElfSymbol> Functions => _functions;

    /// <summary>
    /// The PLT's entries named <c>function@plt</c> as perf names them (no symbol table has them), by address; empty
    /// when the file has no lazy-binding PLT of x86-64's layout.
    /// </summary>
    public IReadOnlyList<ElfSymbol> PltEntries => _pltEntries;

    /// <summary>Data object symbols (STT_OBJECT, sized, defined), by address.</summary>
    public IReadOnlyList<ElfSymbol> Objects => _objects;

    /// <summary>
    /// <see cref="TryLoad"/>'s error for a PE file: a .NET assembly mapped as code (its ReadyToRun methods run from
    /// the mapping; the runtime's perf map lists only the methods it compiles at run time).
    /// </summary>
    public const string PortableExecutable = "a PE file (a .NET assembly), no ELF symbols";

    /// <summary>True when the file starts as a PE image does ("MZ"): Windows binaries, .NET assemblies.</summary>
    private static bool IsPortableExecutable(string path)
    {
        Span<byte> magic = stackalloc byte[2];
        using var file = File.OpenRead(path);
        return file.ReadAtLeast(magic, 2, throwOnEndOfStream: false) == 2 && magic[0] == (byte)'M'
            && magic[1] == (byte)'Z';
    }

    /// <summary>Reads <paramref name="path"/>; null, with <paramref name="error"/> set, when it cannot.</summary>
    public static ElfSymbols? TryLoad(string path, out string? error)
    {
        error = null;
        try
        {
            if (!File.Exists(path))
            {
                error = "not found";
                return null;
            }

            if (!ELFReader.TryLoad<ulong>(path, out var elf))
            {
                error = IsPortableExecutable(path) ? PortableExecutable : "not a 64-bit ELF file";
                return null;
            }

            using (elf)
            {
                var symbols = new ElfSymbols(path);
                symbols.Read(elf);
                return symbols;
            }
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            // ELFSharp throws whatever a damaged file leads it to (index, argument, end of stream): the file is
            // unreadable, which names its frames module+offset, not a failed report.
            error = "unreadable ELF (" + e.GetType().Name + ")";
            return null;
        }
    }

    /// <summary>
    /// The NT_GNU_BUILD_ID note among a note section's entries (u32 namesz, descsz, type; name and desc each padded to
    /// 4 bytes): the vDSO keeps it third in one ".note" section, after two Linux notes; null when none.
    /// </summary>
    internal static byte[]? GnuBuildId(ReadOnlySpan<byte> notes)
    {
        const int BuildIdType = 3;
        while (notes.Length >= 12)
        {
            var nameSize = System.Buffers.Binary.BinaryPrimitives.ReadUInt32LittleEndian(notes);
            var descSize = System.Buffers.Binary.BinaryPrimitives.ReadUInt32LittleEndian(notes[4..]);
            var type = System.Buffers.Binary.BinaryPrimitives.ReadUInt32LittleEndian(notes[8..]);
            var nameEnd = 12 + (((ulong)nameSize + 3) & ~3UL);
            var descEnd = nameEnd + (((ulong)descSize + 3) & ~3UL);
            if (descEnd > (ulong)notes.Length) return null;
            if (type == BuildIdType && descSize > 0 && nameSize == 4 && notes[12..16].SequenceEqual("GNU\0"u8))
                return notes.Slice((int)nameEnd, (int)descSize).ToArray();
            notes = notes[(int)descEnd..];
        }

        return null;
    }

    /// <summary>
    /// Reads an ELF image held in memory (the vDSO), named <paramref name="name"/>; null, with
    /// <paramref name="error"/> set, when it cannot. It has no debug files and no DWARF sections are read.
    /// </summary>
    public static ElfSymbols? TryLoadImage(byte[] image, string name, out string? error)
    {
        error = null;
        try
        {
            if (!ELFReader.TryLoad<ulong>(new MemoryStream(image, writable: false), shouldOwnStream: true,
                    out var elf))
            {
                error = "not a 64-bit ELF image";
                return null;
            }

            using (elf)
            {
                var symbols = new ElfSymbols(name) { _dwarfRead = true };
                symbols.Read(elf);
                return symbols;
            }
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            error = "unreadable ELF image (" + e.GetType().Name + ")";
            return null;
        }
    }

    private void Read(ELF<ulong> elf)
    {
        Loads = elf.Segments.OfType<Segment<ulong>>().Where(s => s.Type == SegmentType.Load)
            .Select(s => new ElfLoad(s.Address, (ulong)s.Offset, (ulong)s.FileSize, s.Size)).ToArray();
        foreach (var note in elf.Sections.Where(s => s.Type == SectionType.Note))
            BuildId ??= GnuBuildId(note.GetContents());
        if (elf.TryGetSection(".gnu_debuglink", out var link) && link is ProgBitsSection<ulong> bits)
        {
            var bytes = bits.GetContents();
            var nul = Array.IndexOf(bytes, (byte)0);
            if (nul > 0) DebugLink = System.Text.Encoding.UTF8.GetString(bytes, 0, nul);
        }

        // .eh_frame is allocated (SHT_PROGBITS, in a PT_LOAD) even in stripped files; a debug file's is NOBITS.
        if (elf.TryGetSection(".eh_frame", out var frames) && frames is ProgBitsSection<ulong> eh
            && frames.Type == SectionType.ProgBits)
            _ehFrame = (eh.GetContents(), eh.LoadAddress);

        _pltEntries = PltEntriesOf(elf);
        var table = elf.TryGetSection(".symtab", out var symtab) && symtab is SymbolTable<ulong> s
            ? s
            : elf.TryGetSection(".dynsym", out var dynsym) ? dynsym as SymbolTable<ulong> : null;
        HasSymtab = table is not null && table.Name == ".symtab";
        if (table is null) return;
        var functions = new List<(ElfSymbol Symbol, int Rank)>();
        var objects = new List<ElfSymbol>();
        foreach (var entry in table.Entries)
        {
            // Undefined (index 0), absolute and common symbols name nothing mapped from this file.
            if (string.IsNullOrEmpty(entry.Name) || entry.PointedSectionIndex == 0 || entry.IsPointedIndexSpecial)
                continue;
            // Labels (untyped symbols in code, such as ld.so's _start) name code too, as perf takes them.
            if (entry.Type is SymbolType.Function or SymbolType.ProcessorSpecific
                || (entry.Type == SymbolType.NotSpecified
                    && entry.PointedSection is { } section && section.Flags.HasFlag(SectionFlags.Executable)))
                functions.Add((new ElfSymbol(entry.Value, entry.Size, entry.Name), Rank(entry)));
            else if (entry.Type == SymbolType.Object && entry.Size > 0)
                objects.Add(new ElfSymbol(entry.Value, entry.Size, entry.Name));
        }

        _functions = Deduplicate(functions);
        _objects = objects.OrderBy(o => o.Start).ThenByDescending(o => o.Size).ToArray();
    }

    /// <summary>
    /// One symbol per x86-64 PLT entry, from .rela.plt (perf's dso__synthesize_plt_symbols): the n-th
    /// R_X86_64_JUMP_SLOT relocation is the n-th 16-byte entry, after .plt's 16-byte header, or of .plt.sec without
    /// one where the file was built for IBT; named after the .dynsym symbol it binds.
    /// </summary>
    private static ElfSymbol[] PltEntriesOf(ELF<ulong> elf)
    {
        const int RelaSize = 24, EntrySize = 16, JumpSlot = 7;
        if (elf.Machine != Machine.AMD64 || !elf.TryGetSection(".rela.plt", out var rela)
            || rela.Type != SectionType.RelocationAddends
            || !elf.TryGetSection(".dynsym", out var dynsymSection) || dynsymSection is not SymbolTable<ulong> dynsym)
            return [];
        ulong first, end;
        if (elf.TryGetSection(".plt.sec", out var sec) && sec.Type == SectionType.ProgBits)
            (first, end) = (sec.LoadAddress, sec.LoadAddress + sec.Size);
        else if (elf.TryGetSection(".plt", out var plt) && plt.Type == SectionType.ProgBits)
            (first, end) = (plt.LoadAddress + EntrySize, plt.LoadAddress + plt.Size);
        else return [];

        var bytes = rela.GetContents();
        var names = dynsym.Entries.ToArray();
        var entries = new List<ElfSymbol>();
        for (var at = 0; at + RelaSize <= bytes.Length; at += RelaSize)
        {
            var info = BitConverter.ToUInt64(bytes, at + 8);
            var address = first + (ulong)entries.Count * EntrySize;
            if ((uint)info != JumpSlot || address + EntrySize > end) break;
            var index = info >> 32;
            var name = index < (ulong)names.Length && !string.IsNullOrEmpty(names[index].Name)
                ? names[index].Name : "unknown";
            entries.Add(new ElfSymbol(address, EntrySize, name + "@plt"));
        }

        return entries.ToArray();
    }

    /// <summary>
    /// perf's choice among symbols at one address (tools/perf/util/symbol.c, choose_best_symbol): sized over
    /// zero-sized, non-weak over weak, global over local, fewer leading underscores, then the longer name, then the
    /// one first in the symbol table (glibc's sem_post@GLIBC_2.2.5 before sem_post@@GLIBC_2.34).
    /// </summary>
    private static int Rank(SymbolEntry<ulong> e) =>
        (e.Size > 0 ? 1 << 20 : 0) + (e.Binding != SymbolBinding.Weak ? 1 << 19 : 0)
        + (e.Binding == SymbolBinding.Global ? 1 << 18 : 0)
        + ((16 - Math.Min(16, e.Name.TakeWhile(c => c == '_').Count())) << 12) + Math.Min(e.Name.Length, 4095);

    private static ElfSymbol[] Deduplicate(List<(ElfSymbol Symbol, int Rank)> functions)
    {
        // OrderByDescending is stable: among equal ranks the first in table order stays first.
        var sorted = functions.GroupBy(f => f.Symbol.Start)
            .Select(g => g.OrderByDescending(f => f.Rank).First().Symbol)
            .OrderBy(f => f.Start).ToArray();
        // A zero-sized function reaches to the next one (perf's symbols__fixup_end).
        for (var i = 0; i < sorted.Length; i++)
            if (sorted[i].Size == 0 && i + 1 < sorted.Length)
                sorted[i] = sorted[i] with { Size = sorted[i + 1].Start - sorted[i].Start };
        return sorted;
    }

    private string? _debugPath;
    private (Dwarf.DwarfLineTable? Lines, Dwarf.DwarfInlineTable? Inlines) _dwarf;
    private bool _dwarfRead;

    /// <summary>
    /// The DWARF line table of this file's .debug_line, else of its debug file's (<see cref="UseSymbolsOf"/>), read
    /// on first use (zlib- or zstd-compressed sections included); null when neither has one or it cannot be read.
    /// </summary>
    public Dwarf.DwarfLineTable? Lines => DebugInfo().Lines;

    /// <summary>
    /// The inlined calls of the same file's .debug_info (its call files are numbered by that line table); null when
    /// it has none or they cannot be read.
    /// </summary>
    public Dwarf.DwarfInlineTable? Inlines => DebugInfo().Inlines;

    /// <summary>Both, read together on first use from one load of the file (the string sections decompressed once).
    /// </summary>
    private (Dwarf.DwarfLineTable? Lines, Dwarf.DwarfInlineTable? Inlines) DebugInfo()
    {
        if (_dwarfRead) return _dwarf;
        _dwarfRead = true;
        _dwarf = ReadDwarf(Path) ?? (_debugPath is { } debug ? ReadDwarf(debug) : null) ?? default;
        return _dwarf;
    }

    /// <summary>The line table and inlined calls of <paramref name="path"/>; null when it has no .debug_line.</summary>
    private static (Dwarf.DwarfLineTable?, Dwarf.DwarfInlineTable?)? ReadDwarf(string path)
    {
        try
        {
            if (!ELFReader.TryLoad<ulong>(path, out var elf)) return null;
            using (elf)
            {
                if (Contents(elf, ".debug_line") is not { } line) return null;
                var str = Contents(elf, ".debug_str");
                var lineStr = Contents(elf, ".debug_line_str");
                var lines = Dwarf.DwarfLineTable.Read(line, lineStr, str);
                Dwarf.DwarfInlineTable? inlines = null;
                try
                {
                    if (Contents(elf, ".debug_info") is { } info && Contents(elf, ".debug_abbrev") is { } abbrev)
                        inlines = Dwarf.DwarfInlineTable.Read(new Dwarf.DwarfInfoSections(info, abbrev)
                        {
                            Str = str,
                            LineStr = lineStr,
                            StrOffsets = Contents(elf, ".debug_str_offsets"),
                            Addr = Contents(elf, ".debug_addr"),
                            Ranges = Contents(elf, ".debug_ranges"),
                            RngLists = Contents(elf, ".debug_rnglists"),
                        }, lines);
                }
                catch (Exception e) when (e is not OutOfMemoryException)
                {
                    // A damaged .debug_info names frames with their lines, without their inlined calls.
                }

                return (lines, inlines);
            }
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            return null; // a damaged file names frames without lines
        }
    }

    /// <summary>
    /// A section's bytes, decompressed when SHF_COMPRESSED (ELFCOMPRESS_ZLIB or _ZSTD); null if absent.
    /// </summary>
    private static byte[]? Contents(ELF<ulong> elf, string name)
    {
        if (!elf.TryGetSection(name, out var section) || section is not ProgBitsSection<ulong> bits) return null;
        var raw = bits.GetContents();
        const ulong Compressed = 0x800;
        if (((ulong)section.Flags & Compressed) == 0) return raw;
        // Elf64_Chdr: ch_type, reserved, ch_size, ch_addralign.
        if (raw.Length < 24) return null;
        var type = BitConverter.ToUInt32(raw, 0);
        var size = BitConverter.ToUInt64(raw, 8);
        if (size > 1UL << 30) return null;
        var output = new byte[size];
        using var input = new MemoryStream(raw, 24, raw.Length - 24);
        using Stream inflater = type switch
        {
            1 => new System.IO.Compression.ZLibStream(input, System.IO.Compression.CompressionMode.Decompress),
            2 => new ZstdSharp.DecompressionStream(input),
            _ => Stream.Null,
        };
        inflater.ReadAtLeast(output, output.Length, throwOnEndOfStream: false);
        return output;
    }

    /// <summary>Takes the symbols of <paramref name="debug"/> (a debug file of this one) when it has more.</summary>
    public void UseSymbolsOf(ElfSymbols debug)
    {
        _debugPath = debug.Path;
        if (debug._functions.Length >= _functions.Length) _functions = debug._functions;
        if (debug._objects.Length >= _objects.Length) _objects = debug._objects;
        HasSymtab |= debug.HasSymtab;
    }

    /// <summary>
    /// The link-time address of file offset <paramref name="offset"/> (inside a PT_LOAD's file part).
    /// </summary>
    public ulong? AddressOfFileOffset(ulong offset)
    {
        foreach (var l in Loads)
            if (offset >= l.Offset && offset - l.Offset < Math.Max(l.FileSize, 1))
                return l.Address + (offset - l.Offset);
        return null;
    }

    /// <summary>True when <paramref name="address"/> lies in a PT_LOAD's memory image (.bss included).</summary>
    public bool Loaded(ulong address)
    {
        foreach (var l in Loads)
            if (address >= l.Address && address - l.Address < l.MemorySize) return true;
        return false;
    }

    /// <summary>The function holding <paramref name="address"/> and the offset into it; null in a gap.</summary>
    /// <remarks>
    /// A PLT entry is named as perf names it, before a symbol (often a zero-sized _init) reaching over it.
    /// </remarks>
    public (string Name, ulong Offset)? Function(ulong address) =>
        Containing(_pltEntries, address) ?? Containing(_functions, address);

    /// <summary>The data object holding <paramref name="address"/> (by containment over its size).</summary>
    public (string Name, ulong Offset)? DataObject(ulong address) => Containing(_objects, address);

    private static (string Name, ulong Offset)? Containing(ElfSymbol[] symbols, ulong address)
    {
        int lo = 0, hi = symbols.Length - 1, found = -1;
        while (lo <= hi)
        {
            var mid = (lo + hi) >>> 1;
            if (symbols[mid].Start <= address)
            {
                found = mid;
                lo = mid + 1;
            }
            else hi = mid - 1;
        }

        // Objects may nest (a struct symbol and a member alias): the closest start that still contains it.
        for (var i = found; i >= 0 && i > found - 8; i--)
        {
            var s = symbols[i];
            if (address - s.Start < s.Size) return (s.Name, address - s.Start);
        }

        return null;
    }
}
