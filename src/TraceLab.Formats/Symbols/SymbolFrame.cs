using System.Globalization;

namespace TraceLab.Formats.Symbols;

/// <summary>
/// One frame of a stack, named: the address as recorded, the module (file path, a pseudo name such as [vdso], or
/// "[unknown]" when no mapping held it) and the function with the offset into it. Without a function, the offset
/// is into the module (its file offset), so that unknown stays honest.
/// </summary>
/// <param name="Address">The return address (or the sample's IP, innermost) as recorded.</param>
/// <param name="Module">The module's path, a pseudo name, or <see cref="Unknown"/>.</param>
/// <param name="Symbol">The function; null when none is known.</param>
/// <param name="Offset">Into <paramref name="Symbol"/> when known, else into the module's file.</param>
/// <param name="Kernel">A kernel frame.</param>
public readonly record struct SymbolFrame(ulong Address, string Module, string? Symbol, ulong Offset, bool Kernel)
{
    /// <summary>
    /// The address in the module's terms, as perf script prints it: address − mapping start + pgoff (the file
    /// offset; for a PIE or library's text, the link-time address); the address itself for kernel frames and
    /// addresses no file mapping holds.
    /// </summary>
    public ulong ModuleOffset { get; init; } = Address;

    /// <summary>
    /// The source file and line of the address, from the module's DWARF line table; null without one.
    /// </summary>
    public Dwarf.SourceLine? Source { get; init; }

    /// <summary>
    /// A function inlined at the address (from the module's DWARF .debug_info): the frames of one address list the
    /// inlined ones first, innermost first, then the function they were inlined into, as perf script's "(inlined)".
    /// Its <see cref="Offset"/> is into that function; its <see cref="Source"/> the line inside it.
    /// </summary>
    public bool Inlined { get; init; }

    /// <summary>The module of an address no mapping holds.</summary>
    public const string Unknown = "[unknown]";

    /// <summary>
    /// The module's file name without its directory; a Windows path (an .etl's images) splits at '\' here too.
    /// </summary>
    public string ModuleName => Module.StartsWith('[') ? Module : Module[(Module.LastIndexOfAny(['/', '\\']) + 1)..];

    /// <summary>
    /// "function", "module+0xoffset" without a function, "[unknown]" without a module (the folded stacks and the
    /// call-site names use it).
    /// </summary>
    public string Name => Symbol ?? (Module == Unknown
        ? Unknown
        : ModuleName + "+0x" + Offset.ToString("x", CultureInfo.InvariantCulture));

    /// <summary>Like <see cref="Name"/>, with the offset into the function ("update_stats+0x1b").</summary>
    public string NameWithOffset => Symbol is null
        ? Name
        : Symbol + "+0x" + Offset.ToString("x", CultureInfo.InvariantCulture);
}
