namespace TraceLab.Formats.Symbols.Dwarf;

/// <summary>
/// One function inlined at an address: its name and where its caller called it (the caller's file and line).
/// </summary>
public readonly record struct InlinedCall(string Function, SourceLine? CallSite);

/// <summary>The sections of an ELF file that <see cref="DwarfInlineTable.Read"/> reads (null: absent).</summary>
public sealed record DwarfInfoSections(byte[] Info, byte[] Abbrev)
{
    public byte[]? Str { get; init; }
    public byte[]? LineStr { get; init; }
    public byte[]? StrOffsets { get; init; }
    public byte[]? Addr { get; init; }
    /// <summary>DWARF 2–4 range lists.</summary>
    public byte[]? Ranges { get; init; }
    /// <summary>DWARF 5 range lists.</summary>
    public byte[]? RngLists { get; init; }
}

/// <summary>
/// The inlined calls of an ELF file's .debug_info (DWARF 2–5, 32- and 64-bit units): every
/// DW_TAG_inlined_subroutine's address ranges, the function it inlines (through DW_AT_abstract_origin and
/// DW_AT_specification to a DW_AT_linkage_name or DW_AT_name) and its DW_AT_call_file / DW_AT_call_line, so that an
/// address finds the chain of functions inlined there, innermost first, as `addr2line -i` and perf script print
/// them. Written by hand: no served package reads DWARF (docs/dependencies.md). A unit it cannot read is skipped and
/// counted; nothing here throws for damaged bytes.
/// </summary>
public sealed class DwarfInlineTable
{
    /// <summary>
    /// Ranges looked at, at most, going back from an address (nested inline ranges lie close together).
    /// </summary>
    private const int MaxScan = 4096;

    private readonly ulong[] _lo, _hi, _reach;
    private readonly int[] _depth, _call;
    private readonly InlinedCall[] _calls;

    private DwarfInlineTable(ulong[] lo, ulong[] hi, int[] depth, int[] call, InlinedCall[] calls, int damaged)
    {
        (_lo, _hi, _depth, _call, _calls, DamagedUnits) = (lo, hi, depth, call, calls, damaged);
        // The highest end of any range up to each one: going back from an address stops where nothing before can
        // still hold it.
        _reach = new ulong[lo.Length];
        ulong max = 0;
        for (var i = 0; i < lo.Length; i++) _reach[i] = max = Math.Max(max, hi[i]);
    }

    /// <summary>Address ranges of inlined calls kept.</summary>
    public int Ranges => _lo.Length;

    /// <summary>Units that could not be read (a damaged header, abbreviation or entry).</summary>
    public int DamagedUnits { get; }

    /// <summary>
    /// The calls inlined at link-time address <paramref name="address"/>, innermost first; empty where none is.
    /// </summary>
    public IReadOnlyList<InlinedCall> Find(ulong address)
    {
        var last = SortedAddresses.LastAtOrBelow(_lo, address);

        List<(int Depth, int Call)>? found = null;
        for (var i = last; i >= 0 && last - i < MaxScan && _reach[i] > address; i--)
            if (_hi[i] > address) (found ??= []).Add((_depth[i], _call[i]));
        if (found is null) return [];
        // One call per depth: the deepest first. Two at one depth would be a damaged tree: the later-starting wins.
        found.Sort((a, b) => b.Depth.CompareTo(a.Depth));
        var calls = new List<InlinedCall>(found.Count);
        var previous = int.MaxValue;
        foreach (var (depth, call) in found)
        {
            if (depth == previous) continue;
            previous = depth;
            calls.Add(_calls[call]);
        }

        return calls;
    }

    /// <summary>
    /// Reads the inlined calls of <paramref name="sections"/>; <paramref name="lines"/> (the same file's line table)
    /// names their call files. Null when the file has no inlined call.
    /// </summary>
    public static DwarfInlineTable? Read(DwarfInfoSections sections, DwarfLineTable? lines)
    {
        var state = new ReadState(sections);
        var p = 0;
        var data = sections.Info;
        while (p + 4 <= data.Length)
        {
            var start = p;
            try
            {
                var end = state.ReadUnit(p);
                if (end <= start) break;
                p = end;
            }
            catch (DwarfException)
            {
                state.Damaged++;
                break; // the next unit's start is known only from this one's length: stop
            }
        }

        if (state.Inlined.Count == 0) return null;
        var calls = new List<InlinedCall>(state.Inlined.Count);
        var callIds = new Dictionary<InlinedCall, int>();
        var ranges = new List<(ulong Lo, ulong Hi, int Depth, int Call)>();
        foreach (var s in state.Inlined)
        {
            var name = state.NameOf(s.Origin) ?? "[inlined]";
            SourceLine? site = s.CallLine > 0 && lines?.FileOf(s.LineUnit, s.CallFile) is { } file
                ? new SourceLine(file, s.CallLine)
                : null;
            var call = new InlinedCall(name, site);
            if (!callIds.TryGetValue(call, out var id))
            {
                callIds[call] = id = calls.Count;
                calls.Add(call);
            }

            foreach (var (lo, hi) in s.Ranges) ranges.Add((lo, hi, s.Depth, id));
        }

        var sorted = ranges.OrderBy(r => r.Lo).ThenBy(r => r.Depth).ToArray();
        return new DwarfInlineTable([.. sorted.Select(r => r.Lo)], [.. sorted.Select(r => r.Hi)],
            [.. sorted.Select(r => r.Depth)], [.. sorted.Select(r => r.Call)], [.. calls], state.Damaged);
    }

    /// <summary>An inlined subroutine as read: what it inlines, where, and how deep in other inlined calls.</summary>
    private sealed record InlinedEntry(long Origin, List<(ulong Lo, ulong Hi)> Ranges, int Depth, long LineUnit,
        ulong CallFile, int CallLine);

    /// <summary>What the units read so far gave, and how to read the next.</summary>
    private sealed class ReadState(DwarfInfoSections sections)
    {
        private const ulong TagInlinedSubroutine = 0x1d, TagSubprogram = 0x2e;
        private const ulong AtName = 0x03, AtLinkageName = 0x6e, AtMipsLinkageName = 0x2007, AtSpecification = 0x47,
            AtAbstractOrigin = 0x31, AtLowPc = 0x11, AtHighPc = 0x12, AtRanges = 0x55, AtCallFile = 0x58,
            AtCallLine = 0x59, AtStmtList = 0x10, AtStrOffsetsBase = 0x72, AtAddrBase = 0x73, AtRnglistsBase = 0x74,
            AtGnuAddrBase = 0x2133;

        /// <summary>Most entries of one unit nested in each other: deeper is a damaged tree.</summary>
        private const int MaxNesting = 1024;

        private readonly Dictionary<long, Dictionary<ulong, Abbreviation>> _abbreviations = new();
        /// <summary>Per entry that names a function (by its .debug_info offset): its name, or where to look.</summary>
        private readonly Dictionary<long, (string? Name, long Refer)> _names = new();
        public readonly List<InlinedEntry> Inlined = [];
        public int Damaged;
        /// <summary>The entry being read is one whose strings are kept.</summary>
        private bool _wantText;

        /// <summary>The name of the function of the entry at <paramref name="offset"/>, following references.</summary>
        public string? NameOf(long offset)
        {
            for (var hops = 0; hops < 16 && _names.TryGetValue(offset, out var n); hops++)
            {
                if (n.Name is not null) return n.Name;
                if (n.Refer < 0) return null;
                offset = n.Refer;
            }

            return null;
        }

        /// <summary>Reads the unit at <paramref name="at"/>; returns where the next one starts.</summary>
        public int ReadUnit(int at)
        {
            var data = sections.Info;
            var r = DwarfReader.Unit(data, at, out var offsetSize, out var end);
            var version = r.U16();
            if (version is < 2 or > 5) return end;
            ulong abbrevOffset;
            int addressSize;
            if (version >= 5)
            {
                var unitType = r.U8();
                addressSize = r.U8();
                abbrevOffset = offsetSize == 8 ? r.U64() : r.U32();
                // DW_UT_compile and DW_UT_partial have no more header; skeleton and split units an id, type units a
                // signature and an offset: their entries hold no inlined code of this file.
                if (unitType is not (0x01 or 0x03)) return end;
            }
            else
            {
                abbrevOffset = offsetSize == 8 ? r.U64() : r.U32();
                addressSize = r.U8();
            }

            if (addressSize is not (4 or 8)) return end;
            var unit = new Unit(at, end, version, offsetSize, addressSize, Abbreviations(abbrevOffset));
            ReadEntries(ref r, unit);
            return end;
        }

        private Dictionary<ulong, Abbreviation> Abbreviations(ulong offset)
        {
            if (offset >= (ulong)sections.Abbrev.Length) throw new DwarfException();
            if (_abbreviations.TryGetValue((long)offset, out var known)) return known;
            var table = new Dictionary<ulong, Abbreviation>();
            var r = new DwarfReader(sections.Abbrev, (int)offset, sections.Abbrev.Length);
            while (true)
            {
                var code = r.Uleb();
                if (code == 0) break;
                var tag = r.Uleb();
                var children = r.U8() != 0;
                var attributes = new List<(ulong Name, ulong Form, long Implicit)>();
                while (true)
                {
                    var name = r.Uleb();
                    var form = r.Uleb();
                    if (name == 0 && form == 0) break;
                    attributes.Add((name, form, form == 0x21 ? r.Sleb() : 0));
                    if (attributes.Count > 4096) throw new DwarfException();
                }

                table[code] = new Abbreviation(tag, children, [.. attributes]);
            }

            return _abbreviations[(long)offset] = table;
        }

        private void ReadEntries(ref DwarfReader r, Unit unit)
        {
            // Per open level: how many inlined subroutines enclose its children.
            Span<int> inlineDepth = stackalloc int[MaxNesting];
            var level = 0;
            inlineDepth[0] = 0;
            var first = true;
            while (r.Position < unit.End)
            {
                var entryOffset = r.Position;
                var code = r.Uleb();
                if (code == 0)
                {
                    if (level == 0) break;
                    level--;
                    continue;
                }

                if (!unit.Abbreviations.TryGetValue(code, out var abbreviation)) throw new DwarfException();
                var entry = new Entry();
                // Only functions' names are kept (an inlined call's origin is one): other entries' strings are
                // skipped, not decoded.
                _wantText = abbreviation.Tag == TagSubprogram;
                foreach (var (name, form, implicitValue) in abbreviation.Attributes)
                    Attribute(ref r, unit, ref entry, name, form, implicitValue);

                if (first)
                {
                    first = false;
                    unit.Begin(entry, this);
                }
                else if (abbreviation.Tag == TagInlinedSubroutine)
                {
                    var ranges = RangesOf(unit, entry);
                    if (ranges.Count > 0 && entry.Origin >= 0)
                        Inlined.Add(new InlinedEntry(entry.Origin, ranges, inlineDepth[level], unit.LineTable,
                            entry.CallFile, (int)Math.Min(entry.CallLine, int.MaxValue)));
                }

                if (abbreviation.Tag == TagSubprogram && (entry.Name is not null || entry.Refer >= 0))
                    _names.TryAdd(entryOffset, (entry.Name, entry.Refer));

                if (abbreviation.Children)
                {
                    if (++level >= MaxNesting) throw new DwarfException();
                    inlineDepth[level] = inlineDepth[level - 1] + (abbreviation.Tag == TagInlinedSubroutine ? 1 : 0);
                }
            }
        }

        /// <summary>Reads one attribute's value, keeping the ones the inlined calls need.</summary>
        private void Attribute(ref DwarfReader r, Unit unit, ref Entry entry, ulong name, ulong form,
            long implicitValue)
        {
            var value = Value(ref r, unit, form, implicitValue, out var text, out var kind);
            switch (name)
            {
                case AtLinkageName or AtMipsLinkageName:
                    if (kind == ValueKind.Text) entry.Name = text; // the linkage name: ELF symbols' spelling
                    break;
                case AtName:
                    if (kind == ValueKind.Text) entry.Name ??= text;
                    break;
                case AtAbstractOrigin or AtSpecification:
                    if (kind == ValueKind.Reference)
                    {
                        entry.Refer = (long)value;
                        if (name == AtAbstractOrigin) entry.Origin = (long)value;
                    }
                    break;
                case AtLowPc:
                    if (kind is ValueKind.Address or ValueKind.AddressIndex)
                    {
                        entry.LowPc = value;
                        entry.LowPcIndexed = kind == ValueKind.AddressIndex;
                        entry.HasLowPc = true;
                    }
                    break;
                case AtHighPc:
                    entry.HighPc = value;
                    entry.HighPcKind = kind;
                    break;
                case AtRanges:
                    (entry.Ranges, entry.RangesIndexed, entry.HasRanges) = (value, form == 0x23, true);
                    break;
                case AtCallFile: entry.CallFile = value; break;
                case AtCallLine: entry.CallLine = value; break;
                case AtStmtList: entry.StmtList = (long)value; break;
                case AtStrOffsetsBase: entry.StrOffsetsBase = (long)value; break;
                case AtAddrBase or AtGnuAddrBase: entry.AddrBase = (long)value; break;
                case AtRnglistsBase: entry.RnglistsBase = (long)value; break;
            }
        }

        /// <summary>One value of <paramref name="form"/> (DWARF 5 §7.5.6, and the GNU forms of DWARF 4).</summary>
        private ulong Value(ref DwarfReader r, Unit unit, ulong form, long implicitValue, out string? text,
            out ValueKind kind)
        {
            text = null;
            kind = ValueKind.Constant;
            switch (form)
            {
                case 0x01: // addr
                    kind = ValueKind.Address;
                    return unit.AddressSize == 8 ? r.U64() : r.U32();
                case 0x0b: return r.U8(); // data1
                case 0x05: return r.U16(); // data2
                case 0x06: return r.U32(); // data4
                case 0x07: return r.U64(); // data8
                case 0x0d: return (ulong)r.Sleb(); // sdata
                case 0x0f: return r.Uleb(); // udata
                case 0x21: return (ulong)implicitValue; // implicit_const
                case 0x0c: r.U8(); kind = ValueKind.Other; return 0; // flag
                case 0x19: kind = ValueKind.Other; return 0; // flag_present
                case 0x1e: r.Skip(16); kind = ValueKind.Other; return 0; // data16
                case 0x0a: r.Skip(r.U8()); kind = ValueKind.Other; return 0; // block1
                case 0x03: r.Skip(r.U16()); kind = ValueKind.Other; return 0; // block2
                case 0x04: r.Skip(r.U32()); kind = ValueKind.Other; return 0; // block4
                case 0x09 or 0x18: r.Skip((long)Math.Min(r.Uleb(), int.MaxValue)); kind = ValueKind.Other; return 0;
                case 0x11: kind = ValueKind.Reference; return (ulong)unit.Offset + r.U8(); // ref1
                case 0x12: kind = ValueKind.Reference; return (ulong)unit.Offset + r.U16(); // ref2
                case 0x13: kind = ValueKind.Reference; return (ulong)unit.Offset + r.U32(); // ref4
                case 0x14: kind = ValueKind.Reference; return (ulong)unit.Offset + r.U64(); // ref8
                case 0x15: kind = ValueKind.Reference; return (ulong)unit.Offset + r.Uleb(); // ref_udata
                case 0x10: // ref_addr: a .debug_info offset (an address's size in DWARF 2)
                    kind = ValueKind.Reference;
                    return unit.Version == 2 ? (unit.AddressSize == 8 ? r.U64() : r.U32()) : Offset(ref r, unit);
                case 0x20: r.U64(); kind = ValueKind.Other; return 0; // ref_sig8: a type unit's
                case 0x1c: r.U32(); kind = ValueKind.Other; return 0; // ref_sup4
                case 0x24: r.U64(); kind = ValueKind.Other; return 0; // ref_sup8
                case 0x1f20 or 0x1f21 or 0x1d: Offset(ref r, unit); kind = ValueKind.Other; return 0; // alt/sup file
                case 0x17: return Offset(ref r, unit); // sec_offset
                case 0x22 or 0x23: return r.Uleb(); // loclistx, rnglistx
                case 0x08: // string
                    kind = ValueKind.Text;
                    if (_wantText) text = r.CString();
                    else r.SkipCString();
                    return 0;
                case 0x0e: // strp
                    kind = ValueKind.Text;
                    text = Text(sections.Str, Offset(ref r, unit));
                    return 0;
                case 0x1f: // line_strp
                    kind = ValueKind.Text;
                    text = Text(sections.LineStr, Offset(ref r, unit));
                    return 0;
                case 0x1a or 0x1f02: return StrIndex(unit, r.Uleb(), out text, out kind); // strx, GNU_str_index
                case 0x25: return StrIndex(unit, r.U8(), out text, out kind); // strx1
                case 0x26: return StrIndex(unit, r.U16(), out text, out kind); // strx2
                case 0x27: return StrIndex(unit, U24(ref r), out text, out kind); // strx3
                case 0x28: return StrIndex(unit, r.U32(), out text, out kind); // strx4
                case 0x1b or 0x1f01: kind = ValueKind.AddressIndex; return r.Uleb(); // addrx, GNU_addr_index
                case 0x29: kind = ValueKind.AddressIndex; return r.U8(); // addrx1
                case 0x2a: kind = ValueKind.AddressIndex; return r.U16(); // addrx2
                case 0x2b: kind = ValueKind.AddressIndex; return U24(ref r); // addrx3
                case 0x2c: kind = ValueKind.AddressIndex; return r.U32(); // addrx4
                case 0x16: // indirect: the form comes first
                    {
                        var actual = r.Uleb();
                        if (actual == 0x16) throw new DwarfException();
                        return Value(ref r, unit, actual, implicitValue, out text, out kind);
                    }
                default:
                    throw new DwarfException(); // an unknown form: its size is unknown, the unit cannot be read on
            }
        }

        private static ulong Offset(ref DwarfReader r, Unit unit) => unit.OffsetSize == 8 ? r.U64() : r.U32();

        private static ulong U24(ref DwarfReader r) => r.U16() | ((ulong)r.U8() << 16);

        /// <summary>A string by its index into the unit's .debug_str_offsets contribution.</summary>
        private ulong StrIndex(Unit unit, ulong index, out string? text, out ValueKind kind)
        {
            kind = ValueKind.Text;
            text = null;
            // Before the unit's first entry is read, its base is not known: the name is not one the calls need.
            if (sections.StrOffsets is not { } offsets || unit.StrOffsetsBase < 0) return 0;
            var at = (ulong)unit.StrOffsetsBase + index * (ulong)unit.OffsetSize;
            if (at > (ulong)offsets.Length - (ulong)unit.OffsetSize || offsets.Length < unit.OffsetSize) return 0;
            var offset = unit.OffsetSize == 8
                ? BitConverter.ToUInt64(offsets, (int)at)
                : BitConverter.ToUInt32(offsets, (int)at);
            text = Text(sections.Str, offset);
            return 0;
        }

        private string? Text(byte[]? section, ulong offset) => _wantText ? CStringAt(section, offset) : null;

        /// <summary>The address at <paramref name="index"/> of the unit's .debug_addr contribution.</summary>
        public ulong? Address(Unit unit, ulong index)
        {
            if (sections.Addr is not { } addr || unit.AddrBase < 0) return null;
            var at = (ulong)unit.AddrBase + index * (ulong)unit.AddressSize;
            if (addr.Length < unit.AddressSize || at > (ulong)addr.Length - (ulong)unit.AddressSize) return null;
            return unit.AddressSize == 8 ? BitConverter.ToUInt64(addr, (int)at) : BitConverter.ToUInt32(addr, (int)at);
        }

        /// <summary>An entry's address ranges: DW_AT_low_pc with DW_AT_high_pc, or DW_AT_ranges.</summary>
        private List<(ulong, ulong)> RangesOf(Unit unit, in Entry e)
        {
            var ranges = new List<(ulong, ulong)>(1);
            if (e.HasRanges)
            {
                try
                {
                    RangeList(unit, e, ranges);
                }
                catch (DwarfException)
                {
                    ranges.Clear(); // a damaged list: this call is left out, the unit goes on
                }

                return ranges;
            }

            if (!e.HasLowPc) return ranges;
            ulong? low = e.LowPcIndexed ? Address(unit, e.LowPc) : e.LowPc;
            if (low is not { } lo) return ranges;
            ulong? high = e.HighPcKind switch
            {
                ValueKind.Constant => lo + e.HighPc, // DWARF 4+: the length
                ValueKind.Address => e.HighPc,
                ValueKind.AddressIndex => Address(unit, e.HighPc),
                _ => null,
            };
            if (high is { } hi && hi > lo) ranges.Add((lo, hi));
            return ranges;
        }

        private void RangeList(Unit unit, in Entry e, List<(ulong, ulong)> ranges)
        {
            if (unit.Version < 5)
            {
                // .debug_ranges: pairs of addresses relative to the base (the unit's low_pc), a base-address selection
                // entry (all ones, then the base), two zeros at the end.
                if (sections.Ranges is not { } list || e.Ranges >= (ulong)list.Length) return;
                var r = new DwarfReader(list, (int)e.Ranges, list.Length);
                var baseAddress = unit.LowPc;
                var max = unit.AddressSize == 8 ? ulong.MaxValue : uint.MaxValue;
                for (var n = 0; n < 65536; n++)
                {
                    ulong a = unit.AddressSize == 8 ? r.U64() : r.U32(), b = unit.AddressSize == 8 ? r.U64() : r.U32();
                    if (a == 0 && b == 0) return;
                    if (a == max) baseAddress = b;
                    else if (b > a) ranges.Add((baseAddress + a, baseAddress + b));
                }

                return;
            }

            if (sections.RngLists is not { } rng) return;
            ulong offset = e.Ranges;
            if (e.RangesIndexed)
            {
                // rnglistx: an index into the offsets after the unit's rnglists header, relative to that base.
                if (unit.RnglistsBase < 0) return;
                var at = (ulong)unit.RnglistsBase + e.Ranges * (ulong)unit.OffsetSize;
                if (rng.Length < unit.OffsetSize || at > (ulong)rng.Length - (ulong)unit.OffsetSize) return;
                offset = (ulong)unit.RnglistsBase
                    + (unit.OffsetSize == 8
                        ? BitConverter.ToUInt64(rng, (int)at)
                        : BitConverter.ToUInt32(rng, (int)at));
            }

            if (offset >= (ulong)rng.Length) return;
            var rr = new DwarfReader(rng, (int)offset, rng.Length);
            var b5 = unit.LowPc;
            for (var n = 0; n < 65536; n++)
            {
                var kind = rr.U8();
                ulong lo, hi;
                switch (kind)
                {
                    case 0x00: return; // end_of_list
                    case 0x01: b5 = Address(unit, rr.Uleb()) ?? 0; continue; // base_addressx
                    case 0x02: // startx_endx
                        {
                            var s = Address(unit, rr.Uleb());
                            var t = Address(unit, rr.Uleb());
                            if (s is null || t is null) continue;
                            (lo, hi) = (s.Value, t.Value);
                            break;
                        }
                    case 0x03: // startx_length
                        {
                            var s = Address(unit, rr.Uleb());
                            var length = rr.Uleb();
                            if (s is null) continue;
                            (lo, hi) = (s.Value, s.Value + length);
                            break;
                        }
                    case 0x04: // offset_pair
                        lo = b5 + rr.Uleb();
                        hi = b5 + rr.Uleb();
                        break;
                    case 0x05: b5 = unit.AddressSize == 8 ? rr.U64() : rr.U32(); continue; // base_address
                    case 0x06: // start_end
                        lo = unit.AddressSize == 8 ? rr.U64() : rr.U32();
                        hi = unit.AddressSize == 8 ? rr.U64() : rr.U32();
                        break;
                    case 0x07: // start_length
                        lo = unit.AddressSize == 8 ? rr.U64() : rr.U32();
                        hi = lo + rr.Uleb();
                        break;
                    default: throw new DwarfException();
                }

                if (hi > lo) ranges.Add((lo, hi));
            }
        }

        private static string? CStringAt(byte[]? section, ulong offset)
        {
            if (section is null || offset >= (ulong)section.Length) return null;
            var rest = section.AsSpan((int)offset);
            var nul = rest.IndexOf((byte)0);
            return System.Text.Encoding.UTF8.GetString(nul < 0 ? rest : rest[..nul]);
        }
    }

    private sealed record Abbreviation(ulong Tag, bool Children, (ulong Name, ulong Form, long Implicit)[] Attributes);

    /// <summary>What a value of a form is, for the attributes whose meaning depends on it.</summary>
    private enum ValueKind : byte { Constant, Address, AddressIndex, Reference, Text, Other }

    /// <summary>The attributes of one entry that the inlined calls need.</summary>
    private struct Entry()
    {
        public string? Name;
        public long Refer = -1, Origin = -1;
        public ulong LowPc, HighPc, Ranges, CallFile, CallLine;
        public bool HasLowPc, LowPcIndexed, HasRanges, RangesIndexed;
        public ValueKind HighPcKind = ValueKind.Other;
        public long StmtList = -1, StrOffsetsBase = -1, AddrBase = -1, RnglistsBase = -1;
    }

    /// <summary>One unit being read: its header, and the bases its first entry gives the others.</summary>
    private sealed class Unit(int offset, int end, int version, int offsetSize, int addressSize,
        Dictionary<ulong, Abbreviation> abbreviations)
    {
        public readonly int Offset = offset, End = end, Version = version, OffsetSize = offsetSize,
            AddressSize = addressSize;
        public readonly Dictionary<ulong, Abbreviation> Abbreviations = abbreviations;
        public long StrOffsetsBase = -1, AddrBase = -1, RnglistsBase = -1;
        /// <summary>The base address of its range lists (its DW_AT_low_pc).</summary>
        public ulong LowPc;
        /// <summary>Its line table's offset in .debug_line (DW_AT_stmt_list), which numbers its call files.</summary>
        public long LineTable = -1;

        /// <summary>Takes the bases from the unit's first entry.</summary>
        public void Begin(in Entry unitEntry, ReadState state)
        {
            // Without the base attributes, a DWARF 5 unit's contributions start after their section's first header
            // (GCC writes them only for split units).
            // (unit_length, version, padding or sizes; rnglists also an offset count).
            var wide = OffsetSize == 8;
            var v5 = Version >= 5;
            StrOffsetsBase = unitEntry.StrOffsetsBase >= 0 ? unitEntry.StrOffsetsBase : v5 ? (wide ? 16 : 8) : -1;
            AddrBase = unitEntry.AddrBase >= 0 ? unitEntry.AddrBase : v5 ? (wide ? 16 : 8) : -1;
            RnglistsBase = unitEntry.RnglistsBase >= 0 ? unitEntry.RnglistsBase : v5 ? (wide ? 20 : 12) : -1;
            LineTable = unitEntry.StmtList;
            if (unitEntry.HasLowPc)
                LowPc = unitEntry.LowPcIndexed ? state.Address(this, unitEntry.LowPc) ?? 0 : unitEntry.LowPc;
        }
    }
}
