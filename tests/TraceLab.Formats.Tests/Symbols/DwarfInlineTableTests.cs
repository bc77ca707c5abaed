using System.Globalization;
using TraceLab.Formats.Symbols;
using TraceLab.Formats.Symbols.Dwarf;

namespace TraceLab.Formats.Tests.Symbols;

/// <summary>Needs gcc and binutils' addr2line and nm; skipped, saying so, elsewhere.</summary>
public sealed class GccAddr2lineFactAttribute : FactAttribute
{
    public GccAddr2lineFactAttribute() => Skip = Missing();

    /// <summary>Why the test cannot run here (null: it can), found on this machine when it is discovered.</summary>
    private static string? Missing() =>
        OperatingSystem.IsLinux() && TestEnvironment.OnPath("gcc") && TestEnvironment.OnPath("addr2line")
            && TestEnvironment.OnPath("nm")
            ? null
            : "needs Linux with gcc and binutils (addr2line, nm): apt-get install -y build-essential";
}

/// <summary>
/// Needs libc6-dbg's debug file of this machine's libc.so.6, and addr2line and nm; skipped, saying so, elsewhere.
/// </summary>
public sealed class LibcDebugFactAttribute : FactAttribute
{
    public const string Library = "/usr/lib/x86_64-linux-gnu/libc.so.6";

    /// <summary>The debug file, by the library's build-id; null when it is not installed.</summary>
    public static readonly Lazy<string?> DebugFile = new(() =>
    {
        if (!File.Exists(Library) || ElfSymbols.TryLoad(Library, out _)?.BuildId is not { } id) return null;
        var hex = Convert.ToHexString(id).ToLowerInvariant();
        var path = $"/usr/lib/debug/.build-id/{hex[..2]}/{hex[2..]}.debug";
        return File.Exists(path) ? path : null;
    });

    public LibcDebugFactAttribute() => Skip = Missing();

    /// <summary>Why the test cannot run here (null: it can), found on this machine when it is discovered.</summary>
    private static string? Missing() =>
        OperatingSystem.IsLinux() && TestEnvironment.OnPath("addr2line") && TestEnvironment.OnPath("nm")
            && DebugFile.Value is not null
            ? null
            : $"needs {Library}'s debug file (apt-get install -y libc6-dbg) and binutils";
}

/// <summary>
/// The inlined calls of .debug_info (<see cref="DwarfInlineTable"/>) on programs gcc builds here with inlining
/// (nested, repeated, split into hot and cold parts), as DWARF 5 and DWARF 4: at every instruction of their
/// functions the chain of functions and call lines equals `addr2line -i -f`'s. Damaged copies of the real sections
/// never throw.
/// </summary>
public sealed class DwarfInlineTableTests(ITestOutputHelper output) : IDisposable
{
    private const string Source = """
        #include <stdio.h>
        #include <stdlib.h>
        static volatile long sink;
        static inline __attribute__((always_inline)) void leaf(long n) { sink += n * 3; }
        static inline __attribute__((always_inline)) void middle(long n) {
            leaf(n);
            if (__builtin_expect(n == 12345, 0)) { fprintf(stderr, "rare %ld\n", n); abort(); }
            leaf(n + 1);
        }
        static inline __attribute__((always_inline)) void outer(long n) { for (long i = 0; i < n; i++) middle(i); }
        __attribute__((noinline)) void work(long n) { outer(n); middle(n * 2); }
        __attribute__((noinline)) void other(long n) { leaf(n); sink -= n; }
        int main(int argc, char **argv) { work(argc * 1000); other(argc); return (int)(sink & 1); }
        """;

    private readonly TempDirectory _dir = new("dwarf-inline");

    public void Dispose() => _dir.Dispose();

    private string Build(string debugFlag)
    {
        var source = _dir.File("inline.c");
        File.WriteAllText(source, Source);
        var program = _dir.File("inline" + debugFlag);
        var (code, _, stderr) = ProcessOutput.Run("gcc", "-O2", debugFlag, "-o", program, source);
        Assert.True(code == 0, stderr);
        return program;
    }

    [GccAddr2lineFact]
    public void Dwarf5_chains_equal_addr2line_at_every_instruction() => ChainsEqualAddr2line(Build("-gdwarf-5"));

    [GccAddr2lineFact]
    public void Dwarf4_chains_equal_addr2line_at_every_instruction() => ChainsEqualAddr2line(Build("-gdwarf-4"));

    private void ChainsEqualAddr2line(string program)
    {
        var elf = ElfSymbols.TryLoad(program, out var error);
        Assert.True(elf is not null, error);

        // Every address of the program's own functions (nm: address, size, name), the cold parts included.
        var addresses = new List<ulong>();
        foreach (var line in ProcessOutput.Lines("nm", "-S", "--defined-only", program))
        {
            var parts = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
            if (parts.Length != 4 || parts[2] is not ("t" or "T")
                || parts[3] is not ("work" or "other" or "main" or "work.cold" or "main.cold")) continue;
            var start = ulong.Parse(parts[0], NumberStyles.HexNumber, CultureInfo.InvariantCulture);
            var size = ulong.Parse(parts[1], NumberStyles.HexNumber, CultureInfo.InvariantCulture);
            for (var a = start; a < start + size; a++) addresses.Add(a);
        }

        Assert.True(addresses.Count > 100, $"{addresses.Count} addresses");
        // The program inlines: most addresses sit in inlined code, three deep in outer ← middle ← leaf.
        Compare(elf, program, addresses, minInlined: addresses.Count / 3, minDepth: 3);
    }

    /// <summary>
    /// Asserts that at each address the inlined calls and lines of <paramref name="elf"/> equal addr2line's on
    /// <paramref name="file"/>, and that enough of them are inlined.
    /// </summary>
    /// <param name="fileNames">Compare files by name, and leave the function holding the address out: addr2line
    /// joins a relative directory twice ("./csu/./csu/init-first.c") and names that function by DWARF
    /// (`__GI_abort`), where the symbolizer takes the ELF symbol perf would (`abort`; ElfSymbolsTests).</param>
    private void Compare(ElfSymbols elf, string file, List<ulong> addresses, int minInlined, int minDepth,
        bool fileNames = false)
    {
        var inlines = elf.Inlines;
        Assert.NotNull(inlines);
        Assert.Equal(0, inlines.DamagedUnits);
        // addr2line -i -f -a: "0x…" then function and file:line pairs, innermost first.
        var printed = ProcessOutput.Lines("addr2line", ["-i", "-f", "-a", "-e", file,
            .. addresses.Select(a => "0x" + a.ToString("x", CultureInfo.InvariantCulture))]).ToList();
        var expected = new Dictionary<ulong, List<string>>();
        List<string>? current = null;
        foreach (var line in printed)
        {
            if (line.StartsWith("0x", StringComparison.Ordinal))
            {
                current = [];
                expected[ulong.Parse(line[2..], NumberStyles.HexNumber, CultureInfo.InvariantCulture)] = current;
            }
            // ":?" is addr2line's "??:?" where a row names no file.
            else current!.Add(line.Split(" (discriminator")[0] is var l && l == ":?" ? "??:?" : l);
        }

        List<string> Normalized(List<string> chain) => !fileNames ? chain : [.. chain.SkipLast(2)
            .Select((x, i) => i % 2 == 0 ? x : Path.GetFileName(x)), Path.GetFileName(chain[^1])];

        int compared = 0, withInlines = 0, deepest = 0;
        var differences = new List<string>();
        foreach (var address in addresses)
        {
            var calls = inlines.Find(address);
            var function = elf.Function(address)?.Name ?? "??";
            // Ours as addr2line prints it: each inlined function at its line, then the function they are in.
            var ours = new List<string>();
            var source = elf.Lines?.Find(address);
            foreach (var call in calls)
            {
                ours.Add(call.Function);
                ours.Add(Line(source));
                source = call.CallSite;
            }
            ours.Add(function.Replace(".cold", "", StringComparison.Ordinal));
            ours.Add(Line(source));

            compared++;
            if (calls.Count > 0) withInlines++;
            deepest = Math.Max(deepest, calls.Count);
            if (!Normalized(ours).SequenceEqual(Normalized(expected[address])))
                differences.Add($"0x{address:x}: ours [{string.Join(", ", ours)}], addr2line [" +
                    string.Join(", ", expected[address]) + "]");
        }

        output.WriteLine($"{compared} addresses, {withInlines} with inlined calls, deepest {deepest}; " +
            $"{inlines.Ranges} inline ranges");
        Assert.True(differences.Count == 0,
            $"{differences.Count} of {compared} differ; first: {string.Join(" | ", differences.Take(3))}");
        Assert.True(withInlines > minInlined, $"{withInlines} of {compared} with inlined calls");
        Assert.True(deepest >= minDepth, $"deepest chain {deepest}");
    }

    /// <summary>
    /// Debian's libc, through libc6-dbg's debug file (DWARF 5 as Debian builds it, compressed sections): at 3,000
    /// addresses drawn across its functions, the chain equals addr2line's on the debug file.
    /// </summary>
    [LibcDebugFact]
    public void Libc_debug_file_chains_equal_addr2line()
    {
        var debug = LibcDebugFactAttribute.DebugFile.Value!;
        var elf = ElfSymbols.TryLoad(LibcDebugFactAttribute.Library, out _)!;
        elf.UseSymbolsOf(ElfSymbols.TryLoad(debug, out _)!);
        var read = System.Diagnostics.Stopwatch.StartNew();
        var before = GC.GetAllocatedBytesForCurrentThread();
        Assert.NotNull(elf.Inlines);
        output.WriteLine($"read libc's .debug_info (and .debug_line) in {read.ElapsedMilliseconds} ms, " +
            $"{(GC.GetAllocatedBytesForCurrentThread() - before) >> 20} MiB allocated");
        var functions = ProcessOutput.Lines("nm", "-S", "--defined-only", debug)
            .Select(l => l.Split(' ', StringSplitOptions.RemoveEmptyEntries))
            .Where(p => p.Length == 4 && p[2] is "t" or "T")
            .Select(p => (Start: ulong.Parse(p[0], NumberStyles.HexNumber, CultureInfo.InvariantCulture),
                Size: ulong.Parse(p[1], NumberStyles.HexNumber, CultureInfo.InvariantCulture)))
            .Where(f => f.Size > 0).ToList();
        var random = new Random(3);
        var addresses = Enumerable.Range(0, 3000).Select(_ => functions[random.Next(functions.Count)])
            .Select(f => f.Start + (ulong)random.NextInt64((long)f.Size)).Distinct().Order().ToList();
        Compare(elf, debug, addresses, minInlined: addresses.Count / 10, minDepth: 3, fileNames: true);
    }

    private static string Line(SourceLine? line) =>
        line is { } l ? l.File + ":" + l.Line.ToString(CultureInfo.InvariantCulture) : "??:?";

    [GccAddr2lineFact]
    public void Damaged_debug_info_never_throws()
    {
        var program = Build("-gdwarf-5");
        var sections = Sections(program);
        var intact = DwarfInlineTable.Read(sections, null)!;
        var probe = Enumerable.Range(0, 4096).Select(i => (ulong)(0x1000 + i)).ToList();
        var random = new Random(20261129);
        int read = 0, damaged = 0, withRanges = 0;
        for (var i = 0; i < 3000; i++)
        {
            var info = (byte[])sections.Info.Clone();
            var abbrev = (byte[])sections.Abbrev.Clone();
            var target = i % 3 == 0 ? abbrev : info;
            for (var f = 1 + random.Next(4); f > 0; f--) target[random.Next(target.Length)] = (byte)random.Next(256);
            if (i % 11 == 0) info = info[..random.Next(info.Length)];
            var table = DwarfInlineTable.Read(sections with { Info = info, Abbrev = abbrev }, null);
            read++;
            if (table is null) continue;
            damaged += table.DamagedUnits;
            if (table.Ranges > 0) withRanges++;
            foreach (var a in probe) table.Find(a);
        }

        output.WriteLine($"{read} damaged copies: {damaged} damaged units, {withRanges} with inlined calls");
        Assert.True(intact.Ranges > 0);
        // The damage reached the reader both ways: units refused, and tables still built from damaged bytes.
        Assert.True(damaged > 100, $"{damaged} damaged units in {read} reads");
        Assert.True(withRanges > 500, $"{withRanges} damaged copies still gave inlined calls");
    }

    /// <summary>The program's DWARF sections, read as the symbolizer reads them.</summary>
    private static DwarfInfoSections Sections(string program)
    {
        byte[]? Section(string name)
        {
            var path = Path.Combine(Path.GetDirectoryName(program)!, name.TrimStart('.') + ".bin");
            var (code, _, _) = ProcessOutput.Run("objcopy", "--dump-section", name + "=" + path, program,
                path + ".elf");
            return code == 0 && File.Exists(path) && new FileInfo(path).Length > 0 ? File.ReadAllBytes(path) : null;
        }

        return new DwarfInfoSections(Section(".debug_info")!, Section(".debug_abbrev")!)
        {
            Str = Section(".debug_str"),
            LineStr = Section(".debug_line_str"),
            Addr = Section(".debug_addr"),
            StrOffsets = Section(".debug_str_offsets"),
            RngLists = Section(".debug_rnglists"),
        };
    }
}
