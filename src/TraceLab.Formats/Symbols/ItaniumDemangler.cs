using System.Globalization;
using System.Text;

namespace TraceLab.Formats.Symbols;

/// <summary>
/// C++ symbol names (the Itanium C++ ABI's mangling, which gcc and clang use on Linux) as people read them, in the form
/// GNU <c>c++filt</c>, <c>perf script</c> and <c>nm -C</c> print: <c>_ZN13ObjectMonitor6EnterIEP10JavaThread</c> →
/// <c>ObjectMonitor::EnterI(JavaThread*)</c>. No served package demangles (docs/dependencies.md).
/// </summary>
/// <remarks>
/// Covers what compiled code of servers names in practice: nested and local names, templates (with their parameters
/// resolved, packs expanded), operators, constructors and destructors, ABI tags, lambdas and unnamed types, the
/// substitutions, pointer/reference/array/function/member-pointer types, integer and boolean literals, the special
/// names (vtables, typeinfo, thunks, guard variables, construction vtables) and gcc's clone suffixes. A name that uses
/// anything else (expressions and <c>decltype</c> in types, vendor qualifiers, float literals, …) is left as it is,
/// mangled, as is anything malformed: a name is printed the way <c>c++filt</c> prints it, or not at all
/// (<c>ItaniumDemanglerTests</c> compares every symbol of libstdc++, libjvm and mariadbd with <c>c++filt</c>'s).
/// </remarks>
public static partial class ItaniumDemangler
{
    /// <summary>The demangled form of <paramref name="symbol"/>, or null when it is not a mangled C++ name this
    /// demangler reads (then the caller keeps the symbol as it is).</summary>
    /// <param name="symbol">An ELF symbol (or DWARF linkage name).</param>
    /// <param name="parameters">
    /// True: a function with its parameters, qualifiers, template return type and clone suffixes, as <c>c++filt</c>
    /// prints it (<c>ObjectMonitor::EnterI(JavaThread*)</c>); false: its name alone, as <c>perf script</c> (without -v)
    /// prints it (<c>ObjectMonitor::EnterI</c>): <c>c++filt -p</c>'s form, with std::string, std::ostream … not
    /// written out (<see cref="Parser"/>'s abbreviations).
    /// </param>
    public static string? Demangle(string symbol, bool parameters = true)
    {
        if (symbol.Length < 3 || !symbol.StartsWith("_Z", StringComparison.Ordinal) || IsRustLegacy(symbol))
            return null;
        // A symbol version ("@@GLIBCXX_3.4", as nm -D prints dynamic symbols) is kept after the name.
        var version = symbol.IndexOf('@', StringComparison.Ordinal);
        try
        {
            if (version < 0) return new Parser(symbol, parameters).Mangled();
            return new Parser(symbol[..version], parameters).Mangled() + symbol[version..];
        }
        catch (Exception e) when (e is NotDemangled or OverflowException or IndexOutOfRangeException
            or ArgumentOutOfRangeException)
        {
            return null;
        }
    }

    /// <summary>
    /// Rust's legacy mangling borrows C++'s (<c>_ZN3std2rt10lang_start17h0123456789abcdefE</c>) but escapes its
    /// identifiers (<c>$LT$</c>, <c>..</c>) and ends in a hash component: read as C++ it would print those escapes, so
    /// it is left mangled.
    /// </summary>
    private static bool IsRustLegacy(string symbol)
    {
        var end = symbol.IndexOf('.', StringComparison.Ordinal) is var dot and > 0 ? dot : symbol.Length;
        if (end < 21 || symbol[end - 1] != 'E' || string.CompareOrdinal(symbol, end - 20, "17h", 0, 3) != 0)
            return false;
        for (var i = end - 17; i < end - 1; i++)
            if (!char.IsAsciiHexDigitLower(symbol[i])) return false;
        return true;
    }

    /// <summary><see cref="Demangle"/>, or the symbol itself.</summary>
    public static string DemangleOrKeep(string symbol, bool parameters = true) =>
        Demangle(symbol, parameters) ?? symbol;

    /// <summary>
    /// The longest name printed: substitutions can make a short symbol print exponentially long (each one repeating
    /// the last twice); a forged one is left mangled instead.
    /// </summary>
    private const int MaxPrinted = 16 * 1024;

    /// <summary>How deep types may nest (pointer to pointer to …): a forged symbol must not exhaust the
    /// stack.</summary>
    private const int MaxDepth = 200;

    /// <summary>Thrown inside the parser for any construct it does not read: the symbol stays mangled.</summary>
    private sealed class NotDemangled : Exception
    {
    }
}
