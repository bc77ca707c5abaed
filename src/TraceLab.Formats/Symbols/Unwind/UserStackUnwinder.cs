namespace TraceLab.Formats.Symbols.Unwind;

/// <summary>
/// A user thread's registers at a sample and the copy of its stack the kernel took (perf's REGS_USER and
/// STACK_USER): DWARF register numbers (x86-64: 0 rax … 15 r15, 16 the instruction pointer), the copied bytes, and
/// the stack pointer they start at.
/// </summary>
public ref struct UserContext
{
    public Span<ulong> Registers;
    /// <summary>Which <see cref="Registers"/> hold a value (bit per DWARF number).</summary>
    public uint Known;
    public ReadOnlySpan<byte> Stack;
    public ulong StackStart;

    /// <summary>The 8 bytes at <paramref name="address"/> of the copied stack; false outside it.</summary>
    public readonly bool TryRead(ulong address, out ulong value)
    {
        value = 0;
        var offset = address - StackStart;
        if (address < StackStart || offset > (ulong)Stack.Length - 8 || Stack.Length < 8) return false;
        value = System.Buffers.Binary.BinaryPrimitives.ReadUInt64LittleEndian(Stack[(int)offset..]);
        return true;
    }
}

/// <summary>
/// Where an address's unwind rules come from: the CFI of the module mapped there, and the address in it.
/// </summary>
public interface IUnwindModules
{
    /// <summary>
    /// The call frame information of the module holding <paramref name="address"/> in the sampled process and the
    /// link-time address there; null when no module, no file or no .eh_frame (the unwind stops).
    /// </summary>
    CallFrameInfo? Find(ulong address, out ulong linkAddress);
}

/// <summary>Why an unwind ended.</summary>
public enum UnwindEnd : byte
{
    /// <summary>The outermost frame said so (its return address is undefined, as clone3's and _start's are).</summary>
    Complete,
    /// <summary>The frame limit.</summary>
    Limit,
    /// <summary>No module, or a module without call frame information, at the address.</summary>
    NoCfi,
    /// <summary>No FDE for the address, or its program could not be run.</summary>
    NoRow,
    /// <summary>A saved register lay outside the copied stack (perf's 8 KB copy ran out).</summary>
    StackCopy,
    /// <summary>A register the rules need was not recorded, or the rules do not progress.</summary>
    BadRule,
}

/// <summary>
/// Unwinds a copied user stack with the modules' DWARF call frame information, as perf --call-graph dwarf does
/// offline (with libdw or libunwind): the sampled instruction pointer, then each caller's return address less one
/// (inside its call instruction), innermost first — the addresses perf script prints for such a stack. One instance
/// per reader, reused (its row is); not thread-safe.
/// </summary>
public sealed class UserStackUnwinder
{
    /// <summary>DWARF x86-64 number of the stack pointer.</summary>
    public const int Sp = 7;
    /// <summary>DWARF x86-64 number of the instruction pointer (the return address column).</summary>
    public const int Ip = 16;

    private readonly UnwindRow _row = new();
    private readonly ulong[] _next = new ulong[CallFrameInfo.Registers];

    /// <summary>How the last unwind ended.</summary>
    public UnwindEnd LastEnd { get; private set; }

    /// <summary>Unwinds stopped for each reason (<see cref="UnwindEnd"/>).</summary>
    public long[] Ends { get; } = new long[Enum.GetValues<UnwindEnd>().Length];

    /// <summary>
    /// Writes the frames of <paramref name="context"/> to <paramref name="frames"/>; returns how many. The context's
    /// registers are changed (they become the outermost frame's).
    /// </summary>
    public int Unwind(ref UserContext context, IUnwindModules modules, Span<ulong> frames)
    {
        var n = 0;
        var regs = context.Registers;
        if ((context.Known & (1u << Ip)) == 0 || frames.IsEmpty) return 0;
        var end = UnwindEnd.Limit;
        while (n < frames.Length)
        {
            var ip = regs[Ip];
            if (ip == 0)
            {
                end = UnwindEnd.Complete;
                break;
            }

            // A return address points after its call, which may be the last byte of the function (a call to a
            // noreturn function): the frame is the call itself, one byte back, as every unwinder looks it up and as
            // perf reports a dwarf-unwound caller (libdw's pc of a frame that is not an activation).
            var lookup = n == 0 ? ip : ip - 1;
            frames[n++] = lookup;
            var cfi = modules.Find(lookup, out var link);
            if (cfi is null)
            {
                end = UnwindEnd.NoCfi;
                break;
            }

            if (!cfi.TryRow(link, _row))
            {
                end = UnwindEnd.NoRow;
                break;
            }

            var step = Step(ref context, cfi.Data);
            if (step is { } stop)
            {
                end = stop;
                break;
            }
        }

        Ends[(int)end]++;
        LastEnd = end;
        return n;
    }

    /// <summary>One frame up: null when it went, else why not.</summary>
    private UnwindEnd? Step(ref UserContext context, ReadOnlySpan<byte> section)
    {
        var regs = context.Registers;
        ref readonly var cfaRule = ref _row.Cfa;
        ulong cfa;
        if (cfaRule.Kind == UnwindRuleKind.Register)
        {
            var r = cfaRule.Start;
            if (r >= CallFrameInfo.Registers || (context.Known & (1u << r)) == 0) return UnwindEnd.BadRule;
            cfa = regs[r] + (ulong)cfaRule.Value;
        }
        else if (cfaRule.Kind == UnwindRuleKind.Expression)
        {
            if (!DwarfExpression.TryEvaluate(section.Slice(cfaRule.Start, cfaRule.Length), ref context, null,
                out cfa)) return UnwindEnd.BadRule;
        }
        else return UnwindEnd.BadRule;

        var known = context.Known;
        var nextKnown = 0u;
        for (var r = 0; r < CallFrameInfo.Registers; r++)
        {
            ref readonly var rule = ref _row.Rule(r);
            ulong value;
            switch (rule.Kind)
            {
                case UnwindRuleKind.Unspecified:
                    // Callee-saved registers keep their value; the return address has no rule at the outermost frame.
                    if (r == _row.ReturnRegister) return UnwindEnd.Complete;
                    if ((known & (1u << r)) == 0) continue;
                    value = regs[r];
                    break;
                case UnwindRuleKind.SameValue:
                    if ((known & (1u << r)) == 0) continue;
                    value = regs[r];
                    break;
                case UnwindRuleKind.Undefined:
                    if (r == _row.ReturnRegister) return UnwindEnd.Complete;
                    continue;
                case UnwindRuleKind.Offset:
                    if (!context.TryRead(cfa + (ulong)rule.Value, out value)) return UnwindEnd.StackCopy;
                    break;
                case UnwindRuleKind.ValueOffset:
                    value = cfa + (ulong)rule.Value;
                    break;
                case UnwindRuleKind.Register:
                    if (rule.Value >= CallFrameInfo.Registers || (known & (1u << (int)rule.Value)) == 0) continue;
                    value = regs[(int)rule.Value];
                    break;
                case UnwindRuleKind.Expression:
                case UnwindRuleKind.ValueExpression:
                    if (!DwarfExpression.TryEvaluate(section.Slice(rule.Start, rule.Length), ref context, cfa,
                        out var at)) return UnwindEnd.BadRule;
                    if (rule.Kind == UnwindRuleKind.ValueExpression) value = at;
                    else if (!context.TryRead(at, out value)) return UnwindEnd.StackCopy;
                    break;
                default:
                    continue;
            }

            _next[r] = value;
            nextKnown |= 1u << r;
        }

        // The caller's stack pointer is the CFA; its instruction pointer the return address.
        var sp = (known & (1u << Sp)) != 0 ? regs[Sp] : 0;
        if (cfa <= sp) return UnwindEnd.BadRule; // a stack grows down: an unwind that does not go up loops
        _next[Sp] = cfa;
        nextKnown |= 1u << Sp;
        if (_row.ReturnRegister != Ip)
        {
            if ((nextKnown & (1u << _row.ReturnRegister)) == 0) return UnwindEnd.BadRule;
            _next[Ip] = _next[_row.ReturnRegister];
        }

        if ((nextKnown & (1u << Ip)) == 0) return UnwindEnd.Complete;
        _next.AsSpan().CopyTo(regs);
        context.Known = nextKnown;
        return null;
    }
}
