using System.Diagnostics;
using TraceLab.Core;
using TraceLab.Formats.Symbols;

namespace TraceLab.Formats.Tests.Symbols;

/// <summary>Needs this machine's libc.so.6 (Linux x86-64) as a real ELF file; skipped, saying so, elsewhere.</summary>
public sealed class LibcFactAttribute : FactAttribute
{
    /// <summary>The ELF file the tests read.</summary>
    public const string Path = "/usr/lib/x86_64-linux-gnu/libc.so.6";

    public LibcFactAttribute()
    {
        if (!OperatingSystem.IsLinux() || !File.Exists(Path)) Skip = $"needs Linux x86-64 with {Path} (libc6)";
    }
}

/// <summary>
/// Needs Debian's ls (an x86-64 binary with a PLT) and binutils' objdump; skipped, saying so, elsewhere.
/// </summary>
public sealed class ObjdumpLsFactAttribute : FactAttribute
{
    /// <summary>The ELF file the test reads.</summary>
    public const string Path = "/usr/bin/ls";

    public ObjdumpLsFactAttribute()
    {
        if (!OperatingSystem.IsLinux() || !File.Exists(Path) || !TestEnvironment.OnPath("objdump"))
            Skip = $"needs Linux x86-64 with {Path} and objdump (binutils)";
    }
}

/// <summary>
/// ELF symbols through ELFSharp on a binary of this machine (libc.so.6), checked against its own symbol table, and ELF
/// files that lie: truncated and overwritten copies give a module+offset name or a
/// reason, never an exception or a hang.
/// </summary>
public sealed class ElfSymbolsTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("tracelab-elf-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);


    [LibcFact]
    public void Functions_and_load_segments_come_from_the_file()
    {
        const string path = LibcFactAttribute.Path;
        var elf = ElfSymbols.TryLoad(path, out var error);
        Assert.True(elf is not null, error);
        Assert.NotEmpty(elf.Loads);
        Assert.NotNull(elf.BuildId);
        // Every function found at its own start, offset 0 (or a same-address alias perf prefers).
        foreach (var f in elf.Functions.Take(200))
            Assert.Equal(0UL, elf.Function(f.Start)!.Value.Offset);
        var sized = elf.Functions.First(f => f.Size > 4);
        Assert.Equal((sized.Name, 3UL), elf.Function(sized.Start + 3));
    }

    /// <summary>
    /// PLT entries (a frame preempted in a PLT stub, a call site's return into one) are named <c>name@plt</c> as
    /// perf and objdump name them: every <c>&lt;name@plt&gt;</c> label objdump prints for Debian's ls, at its address.
    /// </summary>
    [ObjdumpLsFact]
    public void Plt_entries_are_named_as_objdump_names_them()
    {
        const string path = ObjdumpLsFactAttribute.Path;
        var objdump = new List<(ulong, string)>();
        foreach (var line in ProcessOutput.Lines("objdump", "-d", "-j", ".plt", "-j", ".plt.sec", path))
            if (line.EndsWith("@plt>:", StringComparison.Ordinal))
                objdump.Add((Convert.ToUInt64(line[..line.IndexOf(' ')], 16), line[(line.IndexOf('<') + 1)..^2]));

        var elf = ElfSymbols.TryLoad(path, out var error);
        Assert.True(elf is not null, error);
        Assert.True(objdump.Count > 10, $"objdump printed {objdump.Count} PLT labels");
        Assert.Equal(objdump, elf.PltEntries.Select(e => (e.Start, e.Name)));
        foreach (var (address, name) in objdump) Assert.Equal((name, 5UL), elf.Function(address + 5));
    }

    [Fact]
    public void Missing_and_non_elf_files_give_a_reason()
    {
        Assert.Null(ElfSymbols.TryLoad(Path.Combine(_dir, "none"), out var missing));
        Assert.Equal("not found", missing);
        var text = Path.Combine(_dir, "text");
        File.WriteAllText(text, "not an ELF file at all");
        Assert.Null(ElfSymbols.TryLoad(text, out var notElf));
        Assert.NotNull(notElf);
    }

    [Fact]
    public void A_data_file_mapped_beside_the_modules_is_not_said_until_it_is_mapped_as_code()
    {
        // perf records data mappings with --call-graph dwarf (mmap_data): ld.so.cache, locale archives.
        var text = Path.Combine(_dir, "ld.so.cache");
        File.WriteAllText(text, "not an ELF file at all");
        var maps = new ProcessMaps();
        maps.Add(7, new ModuleMapping(0x7f0000000000, 0x1000, 0, text, null, false, 0));
        var symbolizer = new StackSymbolizer(maps);
        Assert.Null(symbolizer.DataObject(7, 0x7f0000000010, 10));
        Assert.Empty(symbolizer.Notes);
        maps.Add(7, new ModuleMapping(0x7f0000100000, 0x1000, 0, text, null, true, 20));
        Assert.Null(symbolizer.Frame(7, 0x7f0000100010, 30, kernel: false).Symbol);
        Assert.Single(symbolizer.Notes);
        Assert.StartsWith(text + ": ", symbolizer.Notes[0], StringComparison.Ordinal);
    }

    [LibcFact]
    public void A_changed_binary_is_not_used_and_said_once()
    {
        const string path = LibcFactAttribute.Path;
        var maps = new ProcessMaps();
        maps.Add(7, new ModuleMapping(0x7f0000000000, 0x200000, 0, path, [9, 9, 9, 9], true, 0));
        var symbolizer = new StackSymbolizer(maps);
        var frame = symbolizer.Frame(7, 0x7f0000001234, 10, kernel: false);
        symbolizer.Frame(7, 0x7f0000001238, 10, kernel: false);
        Assert.Null(frame.Symbol);
        Assert.Equal(0x1234UL, frame.Offset);
        Assert.Single(symbolizer.Notes);
        Assert.Contains("differs from the recorded 09090909", symbolizer.Notes[0], StringComparison.Ordinal);
        Assert.Equal(SymbolFrame.Unknown, symbolizer.Frame(7, 0x1000, 10, kernel: false).Module);
    }

    [LibcFact]
    public void Elf_files_that_lie_give_no_exception_and_no_hang()
    {
        const string path = LibcFactAttribute.Path;
        var original = File.ReadAllBytes(path);
        var rng = new Random(20261128);
        var failures = new List<string>();
        for (var i = 0; i < 120; i++)
        {
            var bytes = (byte[])original.Clone();
            string what;
            if (i % 4 == 0)
            {
                var cut = rng.Next(original.Length);
                bytes = bytes[..cut];
                what = $"cut at {cut}";
            }
            else
            {
                // Headers and tables sit at the start and the end (section headers): damage those most.
                var at = i % 2 == 0 ? rng.Next(Math.Min(4096, bytes.Length)) : bytes.Length - 1 - rng.Next(8192);
                for (var k = 0; k < 8; k++) bytes[Math.Clamp(at + k, 0, bytes.Length - 1)] = (byte)rng.Next(256);
                what = $"8 bytes at {at}";
            }

            var file = Path.Combine(_dir, $"case{i}.so");
            File.WriteAllBytes(file, bytes);
            var watch = Stopwatch.StartNew();
            var task = Task.Run(() =>
            {
                var maps = new ProcessMaps();
                maps.Add(1, new ModuleMapping(0x10000, 0x300000, 0, file, null, true, 0));
                var symbolizer = new StackSymbolizer(maps, options: new SymbolOptions { DebugDirectories = [] });
                for (ulong a = 0x10000; a < 0x310000; a += 0x3001) symbolizer.Frame(1, a, 0, kernel: false);
                symbolizer.DataObject(1, 0x20000, 0);
            });
            try
            {
                if (!task.Wait(TimeSpan.FromSeconds(20))) failures.Add($"{what}: hang");
            }
            catch (AggregateException e)
            {
                failures.Add($"{what}: {e.InnerException}");
            }

            File.Delete(file);
        }

        Assert.True(failures.Count == 0, string.Join("\n", failures.Take(5)));
    }
}
