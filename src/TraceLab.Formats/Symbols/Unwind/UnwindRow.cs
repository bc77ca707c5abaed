namespace TraceLab.Formats.Symbols.Unwind;

/// <summary>How a register of the caller is found (DWARF 5 §6.4.1 register rules).</summary>
public enum UnwindRuleKind : byte
{
    /// <summary>No rule: a callee-saved register keeps its value; the return address has none (the end).</summary>
    Unspecified,
    Undefined,
    SameValue,
    /// <summary>Saved at CFA + value.</summary>
    Offset,
    /// <summary>The value is CFA + value.</summary>
    ValueOffset,
    /// <summary>In register <see cref="UnwindRule.Start"/> (the CFA: register + value).</summary>
    Register,
    /// <summary>Saved at the address the expression computes (the CFA's: the CFA itself).</summary>
    Expression,
    /// <summary>The value the expression computes.</summary>
    ValueExpression,
}

/// <summary>One register's rule; expressions are [<see cref="Start"/>, +<see cref="Length"/>) of the section.</summary>
public struct UnwindRule
{
    public UnwindRuleKind Kind;
    public long Value;
    public int Start;
    public int Length;
}

/// <summary>
/// The unwind row at one address: the CFA's rule and each register's. Reused from lookup to lookup (no allocation:
/// the initial row and the remembered states live in one array made once).
/// </summary>
public sealed class UnwindRow
{
    /// <summary>remember_state nesting kept; deeper programs are refused (none seen in compilers' output).</summary>
    public const int MaxStates = 16;

    /// <summary>The registers, a slot for the rules of registers not tracked, the CFA.</summary>
    private const int Width = CallFrameInfo.Registers + 2;
    private const int CfaSlot = Width - 1;
    private const int Initial = Width;

    private readonly UnwindRule[] _rules = new UnwindRule[Width * (2 + MaxStates)];
    private int _depth;
    private bool _hasInitial;

    /// <summary>The column that holds the return address (the CIE's).</summary>
    public int ReturnRegister { get; private set; }

    public ref readonly UnwindRule Rule(int register) => ref _rules[register];

    public ref readonly UnwindRule Cfa => ref _rules[CfaSlot];

    internal int CfaRegister => _rules[CfaSlot].Start;

    internal long CfaOffset => _rules[CfaSlot].Value;

    internal void Reset(int returnRegister)
    {
        Array.Clear(_rules, 0, Width);
        ReturnRegister = returnRegister;
        _depth = 0;
        _hasInitial = false;
    }

    internal void Set(int register, UnwindRuleKind kind, long value) =>
        _rules[register] = new UnwindRule { Kind = kind, Value = value };

    internal void SetExpression(int register, UnwindRuleKind kind, int start, int length) =>
        _rules[register] = new UnwindRule { Kind = kind, Start = start, Length = length };

    internal void SetCfa(int register, long offset) =>
        _rules[CfaSlot] = new UnwindRule { Kind = UnwindRuleKind.Register, Start = register, Value = offset };

    internal void SetCfaExpression(int start, int length) =>
        _rules[CfaSlot] = new UnwindRule { Kind = UnwindRuleKind.Expression, Start = start, Length = length };

    /// <summary>The row after the CIE's program: what DW_CFA_restore goes back to.</summary>
    internal void SaveInitial()
    {
        Array.Copy(_rules, 0, _rules, Initial, Width);
        _hasInitial = true;
    }

    internal void Restore(int register) =>
        _rules[register] = _hasInitial ? _rules[Initial + register] : default;

    internal bool Remember()
    {
        if (_depth == MaxStates) return false;
        Array.Copy(_rules, 0, _rules, Width * (2 + _depth++), Width);
        return true;
    }

    /// <summary>
    /// DW_CFA_restore_state: the rules come back, the CFA's included (as libgcc and LLVM's libunwind do: compilers
    /// remember the state before an epilogue and restore it after the return, CFA offset and all).
    /// </summary>
    internal bool RestoreRemembered()
    {
        if (_depth == 0) return false;
        Array.Copy(_rules, Width * (2 + --_depth), _rules, 0, Width);
        return true;
    }
}
