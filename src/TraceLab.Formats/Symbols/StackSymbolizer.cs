using System.Globalization;
using TraceLab.Core;

namespace TraceLab.Formats.Symbols;

/// <summary>A data symbol a lock address lies in: the variable, the offset into it and its module.</summary>
/// <param name="Symbol">The variable's name.</param>
/// <param name="Offset">Bytes from the variable's start to the address.</param>
/// <param name="Module">The module (file path) that defines it.</param>
public readonly record struct DataSymbol(string Symbol, ulong Offset, string Module)
{
    /// <summary>"g_stats_lock", or "queue+0x18" inside a larger object.</summary>
    public string Name => Offset == 0 ? Symbol : Symbol + "+0x" + Offset.ToString("x", CultureInfo.InvariantCulture);
}

/// <summary>
/// Names the frames of a trace's stacks and the variables its lock addresses lie in, from the processes' module maps
/// (<see cref="ProcessMaps"/>) and the binaries on this machine: ELF .symtab/.dynsym (with the PIE or library load
/// bias), debug files found by build-id or .gnu_debuglink, kernel symbols, JIT perf maps. A binary whose build-id
/// differs from the one recorded is not used (its frames stay module+offset) and is reported once in
/// <see cref="Notes"/>. Each file is read once.
/// </summary>
public sealed class StackSymbolizer
{
    /// <summary>User addresses lie below this on x86-64; kernel addresses above.</summary>
    private const ulong KernelStart = 0xffff_8000_0000_0000;

    private readonly ProcessMaps _maps;
    private readonly SymbolOptions _options;
    private readonly ModuleFiles _files;
    private readonly Dictionary<int, PerfMap?> _perfMaps = new();
    private readonly Dictionary<int, SymbolFrame[]> _stacks = new();
    private readonly List<string> _notes = [];
    private readonly HashSet<string> _noted = new(StringComparer.Ordinal);
    /// <summary>Each C++ symbol's demangled name, made once (a stack repeats its functions).</summary>
    private readonly Dictionary<string, string> _demangled = new(StringComparer.Ordinal);
    private Kallsyms? _kallsyms;
    private bool _kallsymsAsked;

    /// <param name="maps">The trace's module maps.</param>
    /// <param name="recordedBuildIds">
    /// Build-ids by path as recorded (perf.data's HEADER_BUILD_ID); may be empty.
    /// </param>
    /// <param name="options">Where to look for debug files, perf maps and kernel symbols.</param>
    public StackSymbolizer(ProcessMaps maps, IReadOnlyDictionary<string, byte[]>? recordedBuildIds = null,
        SymbolOptions? options = null)
    {
        _maps = maps;
        _options = options ?? new SymbolOptions();
        _files = new ModuleFiles(recordedBuildIds, _options, Note);
    }

    /// <summary>
    /// What could not be used, each said once (a changed binary, a missing file); the .NET assemblies mapped as code
    /// in one note (a .NET process maps dozens).
    /// </summary>
    public IReadOnlyList<string> Notes => _assemblies.Count == 0 ? _notes : [.. _notes, AssembliesNote()];

    /// <summary>PE files (.NET assemblies) whose frames were asked for: said together.</summary>
    private readonly List<string> _assemblies = [];

    private string AssembliesNote()
    {
        const int Named = 3;
        var names = string.Join(", ", _assemblies.Take(Named).Select(System.IO.Path.GetFileName))
            + (_assemblies.Count > Named ? ", …" : "");
        var what = _assemblies.Count == 1 ? "1 .NET assembly" : $"{_assemblies.Count} .NET assemblies";
        return $"{what} mapped as code ({names}): PE files, no ELF symbols; their precompiled (ReadyToRun) code is "
            + "named module+offset (run the program with DOTNET_PerfMapEnabled=1 DOTNET_ReadyToRun=0: its methods are "
            + "then compiled at run time and named through its perf map)";
    }

    /// <summary>Frames named so far without a function (module+offset or [unknown]), counted per stack named.</summary>
    public long UnsymbolizedFrames { get; private set; }

    /// <summary>Frames named so far.</summary>
    public long Frames { get; private set; }

    /// <summary>
    /// The named frames of stack <paramref name="id"/> of <paramref name="stacks"/>, innermost first.
    /// </summary>
    public IReadOnlyList<SymbolFrame> Stack(StackTable stacks, int id)
    {
        if (_stacks.TryGetValue(id, out var named)) return named;
        var frames = stacks.Frames(id);
        var kernel = stacks.KernelFrames(id);
        var pid = stacks.Process(id);
        var time = stacks.FirstSeen(id);
        var list = new List<SymbolFrame>(frames.Length);
        for (var i = 0; i < frames.Length; i++)
        {
            var frame = Frame(pid, frames[i], time, i < kernel, out var elf, out var linked);
            Frames++;
            if (frame.Symbol is null) UnsymbolizedFrames++;
            // The functions inlined at the address come first, innermost first, as perf script and addr2line -i
            // list them: each at the line inside it, the function they are inlined into at the outermost call's line.
            if (elf?.Inlines?.Find(linked) is { Count: > 0 } calls)
            {
                var source = frame.Source;
                foreach (var call in calls)
                {
                    list.Add(frame with { Symbol = Readable(call.Function), Inlined = true, Source = source });
                    source = call.CallSite;
                }
                frame = frame with { Source = source };
            }
            list.Add(frame);
        }

        named = [.. list];
        _stacks[id] = named;
        return named;
    }

    /// <summary>
    /// Names one address of <paramref name="process"/> at <paramref name="time"/> (the function holding it, not the
    /// calls inlined there: <see cref="Stack"/> lists those too).
    /// </summary>
    public SymbolFrame Frame(int process, ulong address, long time, bool kernel) =>
        Frame(process, address, time, kernel, out _, out _);

    /// <param name="elf">The module's symbols when a function of it named the address.</param>
    /// <param name="linked">The address's link-time address in <paramref name="elf"/>.</param>
    private SymbolFrame Frame(int process, ulong address, long time, bool kernel, out ElfSymbols? elf,
        out ulong linked)
    {
        elf = null;
        linked = 0;
        if (kernel || address >= KernelStart) return KernelFrame(process, address, time);
        var mapping = _maps.Find(process, address, time);
        if (mapping is null)
        {
            // JIT code lives in anonymous memory a perf map may name even without a mapping record.
            return PerfMapOf(process)?.Find(address) is { } jit
                ? new SymbolFrame(address, PerfMapPath(process), jit.Name, jit.Offset, false)
                : new SymbolFrame(address, SymbolFrame.Unknown, null, address, false);
        }

        var fileOffset = address - mapping.Start + mapping.FileOffset;
        if (IsAnonymous(mapping.Path))
        {
            return PerfMapOf(process)?.Find(address) is { } jit
                ? new SymbolFrame(address, PerfMapPath(process), jit.Name, jit.Offset, false)
                : new SymbolFrame(address, mapping.Path, null, address - mapping.Start, false);
        }

        var file = File(mapping);
        if (file?.AddressOfFileOffset(fileOffset) is { } at && file.Function(at) is { } f)
        {
            (elf, linked) = (file, at);
            return new SymbolFrame(address, mapping.Path, Readable(f.Name), f.Offset, false)
            {
                ModuleOffset = fileOffset,
                Source = file.Lines?.Find(at),
            };
        }
        return new SymbolFrame(address, mapping.Path, null, fileOffset, false) { ModuleOffset = fileOffset };
    }

    /// <summary>
    /// The global or static variable <paramref name="address"/> lies in, by containment over the symbol's size: the
    /// module whose PT_LOAD image (.bss included, even where it is an anonymous mapping) holds the address, given the
    /// load bias of that module's mappings in the process. Null for heap and stack addresses and unknown modules.
    /// </summary>
    public DataSymbol? DataObject(int process, ulong address, long time)
    {
        foreach (var (path, bias, elf) in Modules(process, time))
        {
            var linked = address - bias;
            if (address < bias || !elf.Loaded(linked)) continue;
            return elf.DataObject(linked) is { } o ? new DataSymbol(Readable(o.Name), o.Offset, path) : null;
        }

        return null;
    }

    /// <summary>
    /// The modules mapped in <paramref name="process"/> at <paramref name="time"/>, with their load bias.
    /// </summary>
    private IEnumerable<(string Path, ulong Bias, ElfSymbols Elf)> Modules(int process, long time)
    {
        var seen = new HashSet<string>(StringComparer.Ordinal);
        foreach (var m in _maps.Of(process))
        {
            if (IsAnonymous(m.Path) || !(m.Since <= time && time < m.Until || m.Holds(m.Start, m.Since))) continue;
            if (File(m) is not { } elf || elf.AddressOfFileOffset(m.FileOffset) is not { } linked) continue;
            var bias = m.Start - linked;
            if (seen.Add(m.Path)) yield return (m.Path, bias, elf);
        }
    }

    /// <summary>
    /// A symbol as people read it: a C++ name demangled as perf script prints it, a function by its name without
    /// parameters (<see cref="ItaniumDemangler"/>), unless <see cref="SymbolOptions.Demangle"/> is off; any other name
    /// as it is.
    /// </summary>
    private string Readable(string symbol)
    {
        if (!_options.Demangle || !symbol.StartsWith("_Z", StringComparison.Ordinal)) return symbol;
        if (!_demangled.TryGetValue(symbol, out var name))
            _demangled[symbol] = name = ItaniumDemangler.DemangleOrKeep(symbol, parameters: false);
        return name;
    }

    private SymbolFrame KernelFrame(int process, ulong address, long time)
    {
        if (!_kallsymsAsked)
        {
            _kallsymsAsked = true;
            _kallsyms = _options.KernelSymbols?.Invoke();
            if (_kallsyms is null) Note("[kernel.kallsyms]", "kernel frames are named [kernel.kallsyms]+offset: " +
                "the trace holds no kernel symbols and this machine runs another kernel (or hides kallsyms)");
        }

        if (_kallsyms?.Find(address) is { } k)
            return new SymbolFrame(address, "[kernel.kallsyms]", k.Name, k.Offset, true);
        var mapping = _maps.Find(ProcessMaps.Kernel, address, time) ?? _maps.Find(process, address, time);
        return new SymbolFrame(address, "[kernel.kallsyms]", null,
            mapping is null ? address : address - mapping.Start + mapping.FileOffset, true);
    }

    private static bool IsAnonymous(string path) =>
        path.Length == 0 || path.StartsWith("//anon", StringComparison.Ordinal)
        || path.StartsWith('[') && path != VdsoImage.MappingName || path.StartsWith("/memfd:", StringComparison.Ordinal)
        || path.StartsWith("anon_inode:", StringComparison.Ordinal) || IsJitDumpMarker(path);

    /// <summary>
    /// A runtime's jitdump file (jit-PID.dump: .NET with DOTNET_PerfMapEnabled=1, V8, Java agents), mapped executable
    /// only to mark it for `perf inject`: no code runs there and it is no ELF file, so it is treated as JIT memory
    /// (the perf map, else module+offset) rather than said in a note.
    /// </summary>
    private static bool IsJitDumpMarker(string path)
    {
        var name = System.IO.Path.GetFileName(path);
        return name.StartsWith("jit-", StringComparison.Ordinal) && name.EndsWith(".dump", StringComparison.Ordinal);
    }

    private string PerfMapPath(int process) =>
        System.IO.Path.Combine(_options.PerfMapDirectory,
            "perf-" + process.ToString(CultureInfo.InvariantCulture) + ".map");

    private PerfMap? PerfMapOf(int process)
    {
        if (_perfMaps.TryGetValue(process, out var map)) return map;
        try
        {
            var path = PerfMapPath(process);
            if (System.IO.File.Exists(path))
            {
                using var text = new StreamReader(path);
                map = PerfMap.Parse(text);
            }
        }
        catch (IOException)
        {
            map = null;
        }
        catch (UnauthorizedAccessException)
        {
            map = null;
        }

        _perfMaps[process] = map;
        return map;
    }

    private ElfSymbols? File(ModuleMapping mapping) => _files.File(mapping);

    private void Note(string key, string text)
    {
        if (!_noted.Add(key)) return;
        if (text == key + ": " + ElfSymbols.PortableExecutable) _assemblies.Add(key);
        else _notes.Add(text);
    }
}
