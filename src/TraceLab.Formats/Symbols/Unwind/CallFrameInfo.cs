using System.Buffers.Binary;
using TraceLab.Formats.Symbols.Dwarf;

namespace TraceLab.Formats.Symbols.Unwind;

/// <summary>
/// The call frame information of one ELF file (its .eh_frame section, present even in stripped binaries): an index
/// of its FDEs by address, built once, and the unwind row for an address, computed on demand by running the CIE's and
/// the FDE's CFA programs (DWARF 5 §6.4, with the .eh_frame encodings of the LSB). x86-64 registers only: DWARF
/// numbers 0–16, 16 being the return address. Anything it cannot read (a damaged entry, an unknown instruction, a
/// pointer encoding it does not know) makes that FDE, or that address, have no row: the unwind stops there.
/// </summary>
public sealed class CallFrameInfo
{
    /// <summary>Registers tracked: DWARF x86-64 rax..r15 (0–15) and the return address (16).</summary>
    public const int Registers = 17;

    /// <summary>The return address column of x86-64.</summary>
    public const int ReturnAddress = 16;

    private readonly byte[] _data;
    private readonly ulong _address;
    private readonly ulong[] _starts;
    private readonly ulong[] _ends;
    private readonly int[] _fdes;
    private readonly Dictionary<int, Cie?> _cies = new();

    private CallFrameInfo(byte[] data, ulong address, ulong[] starts, ulong[] ends, int[] fdes)
    {
        _data = data;
        _address = address;
        _starts = starts;
        _ends = ends;
        _fdes = fdes;
    }

    /// <summary>FDEs indexed.</summary>
    public int Count => _fdes.Length;

    /// <summary>Entries that could not be read when the index was built (a damaged section).</summary>
    public int Damaged { get; private set; }

    /// <summary>The section's bytes (expressions are read from them).</summary>
    internal ReadOnlySpan<byte> Data => _data;

    /// <summary>
    /// Indexes <paramref name="ehFrame"/>, the contents of .eh_frame loaded at link-time address
    /// <paramref name="address"/> (pc-relative pointers are relative to it).
    /// </summary>
    public static CallFrameInfo Read(byte[] ehFrame, ulong address)
    {
        var entries = new List<(ulong Start, ulong End, int Fde)>();
        var damaged = 0;
        var cies = new Dictionary<int, Cie?>();
        var p = 0;
        while (p + 4 <= ehFrame.Length)
        {
            var start = p;
            if (!TryEntry(ehFrame, ref p, out var body, out var end)) break;
            if (body.Length == 0) break; // the zero terminator
            var idField = start + (end - start - body.Length);
            var ciePointer = BinaryPrimitives.ReadUInt32LittleEndian(ehFrame.AsSpan(idField));
            if (ciePointer != 0)
            {
                var cieAt = idField - (long)ciePointer;
                if (cieAt < 0 || cieAt >= ehFrame.Length) damaged++;
                else
                {
                    var cie = CieAt(ehFrame, address, (int)cieAt, cies);
                    if (cie is not null
                        && TryRange(ehFrame, address, idField + 4, end, cie, out var lo, out var hi, out _)
                        && hi > lo) entries.Add((lo, hi, start));
                    else if (cie is null) damaged++;
                }
            }

            p = end;
        }

        entries.Sort((a, b) => a.Start.CompareTo(b.Start));
        var info = new CallFrameInfo(ehFrame, address, [.. entries.Select(e => e.Start)],
            [.. entries.Select(e => e.End)], [.. entries.Select(e => e.Fde)])
        { Damaged = damaged };
        foreach (var (k, v) in cies) info._cies[k] = v;
        return info;
    }

    /// <summary>
    /// The unwind row at link-time address <paramref name="pc"/>; false when no FDE covers it or its program cannot
    /// be run to there.
    /// </summary>
    public bool TryRow(ulong pc, UnwindRow row)
    {
        var found = SortedAddresses.LastAtOrBelow(_starts, pc);

        if (found < 0 || pc >= _ends[found]) return false;
        var p = _fdes[found];
        if (!TryEntry(_data, ref p, out var body, out var end)) return false;
        var idField = _fdes[found] + (end - _fdes[found] - body.Length);
        var cie = CieAt(_data, _address, idField - (int)BinaryPrimitives.ReadUInt32LittleEndian(_data.AsSpan(idField)),
            _cies);
        if (cie is null || !TryRange(_data, _address, idField + 4, end, cie, out var begin, out _, out var program))
            return false;
        row.Reset(cie.ReturnRegister);
        if (!Run(cie.Instructions.Start, cie.Instructions.End, cie, ulong.MaxValue, 0, row)) return false;
        row.SaveInitial();
        return Run(program, end, cie, pc, begin, row);
    }

    /// <summary>One length-prefixed entry at <paramref name="p"/>: its body (after the length) and its end.</summary>
    private static bool TryEntry(byte[] data, ref int p, out ReadOnlySpan<byte> body, out int end)
    {
        body = default;
        end = p;
        if (p + 4 > data.Length) return false;
        ulong length = BinaryPrimitives.ReadUInt32LittleEndian(data.AsSpan(p));
        var at = p + 4;
        if (length == 0xffffffff)
        {
            if (at + 8 > data.Length) return false;
            length = BinaryPrimitives.ReadUInt64LittleEndian(data.AsSpan(at));
            at += 8;
        }

        if (length > (ulong)(data.Length - at)) return false;
        if (length == 0)
        {
            end = at;
            return true;
        }

        if (length < 4) return false;
        end = at + (int)length;
        body = data.AsSpan(at, (int)length);
        return true;
    }

    /// <summary>A CIE's fields TraceLab uses; null when it cannot be read.</summary>
    private sealed record Cie(ulong CodeAlign, long DataAlign, int ReturnRegister, byte PointerEncoding,
        bool Augmented, (int Start, int End) Instructions);

    private static Cie? CieAt(byte[] data, ulong address, int at, Dictionary<int, Cie?> cache)
    {
        if (cache.TryGetValue(at, out var known)) return known;
        Cie? cie = null;
        try
        {
            cie = ParseCie(data, address, at);
        }
        catch (DwarfException)
        {
        }

        cache[at] = cie;
        return cie;
    }

    private static Cie? ParseCie(byte[] data, ulong address, int at)
    {
        var p = at;
        if (!TryEntry(data, ref p, out var body, out var end) || body.Length == 0) return null;
        var r = new DwarfReader(data, end - body.Length, end);
        if (r.U32() != 0) return null; // not a CIE
        var version = r.U8();
        if (version is not (1 or 3 or 4)) return null;
        var augmentation = r.CString();
        if (augmentation.Contains("eh", StringComparison.Ordinal)) r.Skip(8);
        if (version == 4)
        {
            if (r.U8() != 8) return null; // address size
            r.U8(); // segment selector size
        }

        var codeAlign = r.Uleb();
        var dataAlign = r.Sleb();
        var ra = version == 1 ? r.U8() : (int)Math.Min(r.Uleb(), int.MaxValue);
        byte encoding = 0; // absptr
        var augmented = augmentation.StartsWith('z');
        if (augmented)
        {
            var length = r.Uleb();
            var after = r.Position + (long)Math.Min(length, (ulong)data.Length);
            foreach (var c in augmentation.AsSpan(1))
            {
                switch (c)
                {
                    case 'R':
                        encoding = r.U8();
                        break;
                    case 'L':
                        r.U8();
                        break;
                    case 'P':
                        r.Pointer(r.U8(), address);
                        break;
                    case 'S' or 'B':
                        break;
                    default:
                        // Unknown augmentation: the length lets the rest be skipped.
                        r.Seek(after);
                        goto done;
                }
            }

        done:
            r.Seek(after);
        }
        else if (augmentation.Length > 0 && augmentation != "eh")
        {
            return null; // an augmentation without 'z' cannot be skipped
        }

        if (ra is < 0 or >= Registers) return null;
        return new Cie(codeAlign, dataAlign, ra, encoding, augmented, (r.Position, end));
    }

    /// <summary>An FDE's address range and where its instructions start.</summary>
    private static bool TryRange(byte[] data, ulong address, int at, int end, Cie cie, out ulong begin,
        out ulong finish, out int program)
    {
        begin = finish = 0;
        program = end;
        try
        {
            var r = new DwarfReader(data, at, end);
            begin = r.Pointer(cie.PointerEncoding, address);
            // The range uses the encoding's size only: no pc-relative adjustment.
            var range = r.Pointer((byte)(cie.PointerEncoding & 0x0f), address);
            finish = begin + range;
            if (cie.Augmented) r.Skip((long)Math.Min(r.Uleb(), (ulong)data.Length));
            program = r.Position;
            return finish >= begin && program <= end;
        }
        catch (DwarfException)
        {
            return false;
        }
    }

    /// <summary>
    /// Runs the CFA program in [<paramref name="start"/>, <paramref name="end"/>) from location
    /// <paramref name="location"/> until it passes <paramref name="pc"/>.
    /// </summary>
    private bool Run(int start, int end, Cie cie, ulong pc, ulong location, UnwindRow row)
    {
        try
        {
            var r = new DwarfReader(_data, start, end);
            while (r.Position < end)
            {
                var op = r.U8();
                var high = op & 0xc0;
                var low = op & 0x3f;
                switch (high)
                {
                    case 0x40: // advance_loc
                        location += (ulong)low * cie.CodeAlign;
                        if (location > pc) return true;
                        continue;
                    case 0x80: // offset
                        row.Set(low, UnwindRuleKind.Offset, (long)r.Uleb() * cie.DataAlign);
                        continue;
                    case 0xc0: // restore
                        row.Restore(low);
                        continue;
                }

                switch (op)
                {
                    case 0x00: // nop
                        break;
                    case 0x01: // set_loc
                        location = r.Pointer(cie.PointerEncoding, _address);
                        if (location > pc) return true;
                        break;
                    case 0x02:
                    case 0x03:
                    case 0x04: // advance_loc1/2/4
                        location += (op == 0x02 ? r.U8() : op == 0x03 ? r.U16() : r.U32()) * cie.CodeAlign;
                        if (location > pc) return true;
                        break;
                    case 0x05: // offset_extended
                        row.Set(Reg(r.Uleb()), UnwindRuleKind.Offset, (long)r.Uleb() * cie.DataAlign);
                        break;
                    case 0x06: // restore_extended
                        row.Restore(Reg(r.Uleb()));
                        break;
                    case 0x07: // undefined
                        row.Set(Reg(r.Uleb()), UnwindRuleKind.Undefined, 0);
                        break;
                    case 0x08: // same_value
                        row.Set(Reg(r.Uleb()), UnwindRuleKind.SameValue, 0);
                        break;
                    case 0x09: // register
                        {
                            var reg = Reg(r.Uleb());
                            row.Set(reg, UnwindRuleKind.Register, Reg(r.Uleb()));
                            break;
                        }
                    case 0x0a: // remember_state
                        if (!row.Remember()) return false;
                        break;
                    case 0x0b: // restore_state
                        if (!row.RestoreRemembered()) return false;
                        break;
                    case 0x0c: // def_cfa
                        row.SetCfa(Reg(r.Uleb()), (long)r.Uleb());
                        break;
                    case 0x0d: // def_cfa_register
                        row.SetCfa(Reg(r.Uleb()), row.CfaOffset);
                        break;
                    case 0x0e: // def_cfa_offset
                        row.SetCfa(row.CfaRegister, (long)r.Uleb());
                        break;
                    case 0x0f: // def_cfa_expression
                        {
                            var length = (int)Math.Min(r.Uleb(), int.MaxValue);
                            row.SetCfaExpression(r.Position, length);
                            r.Skip(length);
                            break;
                        }
                    case 0x10: // expression
                    case 0x16: // val_expression
                        {
                            var reg = Reg(r.Uleb());
                            var length = (int)Math.Min(r.Uleb(), int.MaxValue);
                            var kind = op == 0x10 ? UnwindRuleKind.Expression : UnwindRuleKind.ValueExpression;
                            row.SetExpression(reg, kind, r.Position, length);
                            r.Skip(length);
                            break;
                        }
                    case 0x11: // offset_extended_sf
                        row.Set(Reg(r.Uleb()), UnwindRuleKind.Offset, r.Sleb() * cie.DataAlign);
                        break;
                    case 0x12: // def_cfa_sf
                        row.SetCfa(Reg(r.Uleb()), r.Sleb() * cie.DataAlign);
                        break;
                    case 0x13: // def_cfa_offset_sf
                        row.SetCfa(row.CfaRegister, r.Sleb() * cie.DataAlign);
                        break;
                    case 0x14: // val_offset
                        row.Set(Reg(r.Uleb()), UnwindRuleKind.ValueOffset, (long)r.Uleb() * cie.DataAlign);
                        break;
                    case 0x15: // val_offset_sf
                        row.Set(Reg(r.Uleb()), UnwindRuleKind.ValueOffset, r.Sleb() * cie.DataAlign);
                        break;
                    case 0x2e: // GNU_args_size
                        r.Uleb();
                        break;
                    case 0x2f: // GNU_negative_offset_extended
                        row.Set(Reg(r.Uleb()), UnwindRuleKind.Offset, -(long)r.Uleb() * cie.DataAlign);
                        break;
                    default:
                        return false;
                }
            }

            return true;
        }
        catch (DwarfException)
        {
            return false;
        }
    }

    /// <summary>A register number TraceLab tracks, or one past them (its rules are kept nowhere).</summary>
    private static int Reg(ulong n) => n < Registers ? (int)n : Registers;
}
