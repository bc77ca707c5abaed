using TraceLab.Formats.Symbols.Dwarf;

namespace TraceLab.Formats.Symbols.Unwind;

/// <summary>
/// The DWARF expressions CFI uses (DWARF 5 §2.5): what compilers emit for PLT entries
/// (<c>rsp + 8 + ((rip &amp; 15) &gt;= 11) &lt;&lt; 3</c>), signal frames and realigned stacks — register-relative
/// values, constants, arithmetic, comparisons and reads of the copied stack. Anything else (branches, calls, TLS,
/// registers not recorded) fails the evaluation; it never loops, since no branch is taken.
/// </summary>
public static class DwarfExpression
{
    private const int MaxDepth = 64;

    /// <summary>
    /// Evaluates <paramref name="expression"/> with <paramref name="initial"/> pushed first (a register rule's CFA);
    /// false when it uses anything not supported or not recorded.
    /// </summary>
    public static bool TryEvaluate(ReadOnlySpan<byte> expression, ref UserContext context, ulong? initial,
        out ulong result)
    {
        result = 0;
        Span<ulong> stack = stackalloc ulong[MaxDepth];
        var top = 0;
        if (initial is { } value) stack[top++] = value;
        try
        {
            var r = new DwarfReader(expression, 0, expression.Length);
            while (r.Position < expression.Length)
            {
                var op = r.U8();
                if (op is >= 0x30 and <= 0x4f) // lit0..lit31
                {
                    if (!Push(stack, ref top, (ulong)(op - 0x30))) return false;
                    continue;
                }

                if (op is >= 0x70 and <= 0x8f) // breg0..breg31
                {
                    var reg = op - 0x70;
                    var offset = r.Sleb();
                    if (reg >= CallFrameInfo.Registers || (context.Known & (1u << reg)) == 0) return false;
                    if (!Push(stack, ref top, context.Registers[reg] + (ulong)offset)) return false;
                    continue;
                }

                ulong a, b;
                switch (op)
                {
                    case 0x08: // const1u
                        if (!Push(stack, ref top, r.U8())) return false;
                        break;
                    case 0x09: // const1s
                        if (!Push(stack, ref top, (ulong)(sbyte)r.U8())) return false;
                        break;
                    case 0x0a: // const2u
                        if (!Push(stack, ref top, r.U16())) return false;
                        break;
                    case 0x0b: // const2s
                        if (!Push(stack, ref top, (ulong)(short)r.U16())) return false;
                        break;
                    case 0x0c: // const4u
                        if (!Push(stack, ref top, r.U32())) return false;
                        break;
                    case 0x0d: // const4s
                        if (!Push(stack, ref top, (ulong)(int)r.U32())) return false;
                        break;
                    case 0x0e: // const8u
                    case 0x0f: // const8s
                        if (!Push(stack, ref top, r.U64())) return false;
                        break;
                    case 0x10: // constu
                        if (!Push(stack, ref top, r.Uleb())) return false;
                        break;
                    case 0x11: // consts
                        if (!Push(stack, ref top, (ulong)r.Sleb())) return false;
                        break;
                    case 0x12: // dup
                        if (top < 1 || !Push(stack, ref top, stack[top - 1])) return false;
                        break;
                    case 0x13: // drop
                        if (top < 1) return false;
                        top--;
                        break;
                    case 0x06: // deref
                        if (top < 1 || !context.TryRead(stack[top - 1], out stack[top - 1])) return false;
                        break;
                    case 0x23: // plus_uconst
                        if (top < 1) return false;
                        stack[top - 1] += r.Uleb();
                        break;
                    case 0x96: // nop
                        break;
                    default:
                        if (!Binary(op, out var f) || top < 2) return false;
                        b = stack[--top];
                        a = stack[top - 1];
                        stack[top - 1] = f switch
                        {
                            0 => a & b,
                            1 => a - b,
                            2 => a | b,
                            3 => a + b,
                            4 => b >= 64 ? 0 : a << (int)b,
                            5 => b >= 64 ? 0 : a >> (int)b,
                            6 => (ulong)((long)a >> (int)Math.Min(b, 63)),
                            7 => a ^ b,
                            8 => a * b,
                            9 => (long)a == (long)b ? 1UL : 0,
                            10 => (long)a >= (long)b ? 1UL : 0,
                            11 => (long)a > (long)b ? 1UL : 0,
                            12 => (long)a <= (long)b ? 1UL : 0,
                            13 => (long)a < (long)b ? 1UL : 0,
                            _ => (long)a != (long)b ? 1UL : 0,
                        };
                        break;
                }
            }
        }
        catch (DwarfException)
        {
            return false;
        }

        if (top < 1) return false;
        result = stack[top - 1];
        return true;
    }

    private static bool Push(Span<ulong> stack, ref int top, ulong value)
    {
        if (top == stack.Length) return false;
        stack[top++] = value;
        return true;
    }

    /// <summary>The binary operators, numbered for the evaluation's switch.</summary>
    private static bool Binary(byte op, out int f)
    {
        f = op switch
        {
            0x1a => 0, // and
            0x1c => 1, // minus
            0x21 => 2, // or
            0x22 => 3, // plus
            0x24 => 4, // shl
            0x25 => 5, // shr
            0x26 => 6, // shra
            0x27 => 7, // xor
            0x1e => 8, // mul
            0x29 => 9, // eq
            0x2a => 10, // ge
            0x2b => 11, // gt
            0x2c => 12, // le
            0x2d => 13, // lt
            0x2e => 14, // ne
            _ => -1,
        };
        return f >= 0;
    }
}
