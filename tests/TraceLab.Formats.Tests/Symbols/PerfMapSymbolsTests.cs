using TraceLab.Core;
using TraceLab.Formats.Symbols;

namespace TraceLab.Formats.Tests.Symbols;

/// <summary>
/// Frames named through a process's perf map (perf-PID.map) in the two forms runtimes write: .NET's
/// (DOTNET_PerfMapEnabled=1: "0x7f94990b46e0 53 void [System.Private.CoreLib] System.Threading.Monitor::Enter(…)"),
/// and V8's or perf-map-agent's (no "0x"); and .NET assemblies mapped as code, which have no ELF symbols and whose
/// precompiled methods the runtime's map does not list (measured: 0 of 3,378 entries of a .NET 10 process's map lay
/// in System.Private.CoreLib.dll's code mapping). Maps, files and perf map are built here, with known answers.
/// </summary>
public sealed class PerfMapSymbolsTests : IDisposable
{
    private const int Pid = 4242;
    private const ulong Jit = 0x7f00_1000_0000, Assembly = 0x7f00_2000_0000, Other = 0x7f00_3000_0000;
    private readonly string _dir = Directory.CreateTempSubdirectory("tracelab-perfmap-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    private StackSymbolizer Symbolizer(ProcessMaps maps) =>
        new(maps, options: new SymbolOptions { PerfMapDirectory = _dir });

    [Fact]
    public void Jit_code_is_named_by_perf_maps_with_and_without_0x_and_an_assembly_mapping_is_module_and_offset()
    {
        // A PE file as the runtime maps it ("MZ", then anything), and a file that is neither ELF nor PE.
        var dll = Path.Combine(_dir, "System.Private.CoreLib.dll");
        File.WriteAllBytes(dll, [(byte)'M', (byte)'Z', .. new byte[4094]]);
        var text = Path.Combine(_dir, "notes.txt");
        File.WriteAllText(text, "not code at all\n");
        var jitDump = Path.Combine(_dir, $"jit-{Pid}.dump");
        File.WriteAllText(jitDump, "JiTD");
        var maps = new ProcessMaps();
        maps.Add(Pid, new ModuleMapping(Jit, 0x10000, 0, "//anon", null, Executable: true, Since: 0));
        maps.Add(Pid, new ModuleMapping(Assembly, 0x10000, 0x1000, dll, null, Executable: true, Since: 0));
        maps.Add(Pid, new ModuleMapping(Other, 0x10000, 0, text, null, Executable: true, Since: 0));
        maps.Add(Pid, new ModuleMapping(Other + 0x10000, 0x1000, 0, jitDump, null, Executable: true, Since: 0));
        File.WriteAllLines(Path.Combine(_dir, $"perf-{Pid}.map"),
        [
            $"0x{Jit + 0x100:x} 53 void [System.Private.CoreLib] System.Threading.Monitor::Enter(object,bool&)"
                + "[QuickJitted]",
            $"{Jit + 0x200:x} 80 LazyCompile:~worker /srv/app.js:12",
            "0xzz 10 not a number",
        ]);
        var symbolizer = Symbolizer(maps);

        var enter = symbolizer.Frame(Pid, Jit + 0x110, 5, kernel: false);
        Assert.Equal("void [System.Private.CoreLib] System.Threading.Monitor::Enter(object,bool&)[QuickJitted]",
            enter.Symbol);
        Assert.Equal(0x10ul, enter.Offset);
        Assert.Equal(Path.Combine(_dir, $"perf-{Pid}.map"), enter.Module);
        var worker = symbolizer.Frame(Pid, Jit + 0x27f, 5, kernel: false);
        Assert.Equal("LazyCompile:~worker /srv/app.js:12", worker.Symbol);
        Assert.Equal(0x7ful, worker.Offset);
        Assert.Null(symbolizer.Frame(Pid, Jit + 0x280, 5, kernel: false).Symbol);   // past the entry's 0x80 bytes

        // In the assembly's mapping: module+offset (mapping offset + distance into it).
        var precompiled = symbolizer.Frame(Pid, Assembly + 0x2010, 5, kernel: false);
        Assert.Null(precompiled.Symbol);
        Assert.Equal(dll, precompiled.Module);
        Assert.Equal(0x1000ul + 0x2010, precompiled.Offset);
        Assert.Null(symbolizer.Frame(Pid, Other + 0x10, 5, kernel: false).Symbol);
        // The jitdump marker .NET maps executable: JIT memory, said in no note.
        Assert.Null(symbolizer.Frame(Pid, Other + 0x10010, 5, kernel: false).Symbol);

        // The assembly is said in one note for all assemblies; the text file in its own; the marker in none.
        Assert.Equal(2, symbolizer.Notes.Count);
        Assert.Contains(symbolizer.Notes, n => n.StartsWith(
            "1 .NET assembly mapped as code (System.Private.CoreLib.dll): PE files, no ELF symbols; ",
            StringComparison.Ordinal)
            && n.Contains("DOTNET_PerfMapEnabled=1 DOTNET_ReadyToRun=0", StringComparison.Ordinal));
        Assert.Contains(text + ": not a 64-bit ELF file; its frames are named module+offset", symbolizer.Notes);
    }

    [Fact]
    public void Many_assemblies_are_one_note()
    {
        var maps = new ProcessMaps();
        for (var i = 0; i < 5; i++)
        {
            var path = Path.Combine(_dir, $"Lib{i}.dll");
            File.WriteAllBytes(path, [(byte)'M', (byte)'Z', 0, 0]);
            maps.Add(Pid, new ModuleMapping(Other + (ulong)i * 0x10000, 0x10000, 0, path, null, true, 0));
        }
        var symbolizer = Symbolizer(maps);
        for (var i = 0; i < 5; i++) symbolizer.Frame(Pid, Other + (ulong)i * 0x10000 + 8, 5, kernel: false);
        Assert.StartsWith("5 .NET assemblies mapped as code (Lib0.dll, Lib1.dll, Lib2.dll, …): PE files",
            Assert.Single(symbolizer.Notes), StringComparison.Ordinal);
    }
}
