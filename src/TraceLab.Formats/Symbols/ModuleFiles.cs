using TraceLab.Core;

namespace TraceLab.Formats.Symbols;

/// <summary>
/// The ELF file behind a mapping, read once per path: null when it is missing, deleted, unreadable or has changed
/// since the recording (its build-id differs from the one recorded with the mapping or in the trace's header), each
/// said once through the note callback. With debug symbols asked for, a file without .symtab takes the symbols of its
/// debug file (by build-id, then .gnu_debuglink). The symbolizer names frames with it; the unwinder reads CFI.
/// </summary>
public sealed class ModuleFiles
{
    private readonly IReadOnlyDictionary<string, byte[]> _recordedBuildIds;
    private readonly SymbolOptions _options;
    private readonly Action<string, string> _note;
    private readonly bool _debugSymbols;
    private readonly Dictionary<string, ElfSymbols?> _files = new(StringComparer.Ordinal);
    /// <summary>Why a file seen only in data mappings is unusable, said if it is ever mapped as code.</summary>
    private readonly Dictionary<string, string> _unsaid = new(StringComparer.Ordinal);

    /// <param name="recordedBuildIds">Build-ids by path as recorded (perf.data's HEADER_BUILD_ID); may be null.</param>
    /// <param name="options">Where debug files are.</param>
    /// <param name="note">Told once per file what could not be used (key, text).</param>
    /// <param name="debugSymbols">Look for debug files' symbols (not needed for call frame information).</param>
    public ModuleFiles(IReadOnlyDictionary<string, byte[]>? recordedBuildIds, SymbolOptions options,
        Action<string, string> note, bool debugSymbols = true)
    {
        _recordedBuildIds = recordedBuildIds ?? new Dictionary<string, byte[]>();
        _options = options;
        _note = note;
        _debugSymbols = debugSymbols;
    }

    /// <summary>
    /// The symbols of a mapping's file: null when missing, unreadable or changed since the recording. What made it
    /// unusable is said once the file is seen mapped as code: a data mapping of a file that is no ELF file at all
    /// (ld.so.cache, a locale archive, which perf records with mmap_data) names no frame.
    /// </summary>
    public ElfSymbols? File(ModuleMapping mapping)
    {
        var path = mapping.Path;
        if (_files.TryGetValue(path, out var cached))
        {
            if (cached is null && mapping.Executable && _unsaid.Remove(path, out var text)) _note(path, text);
            return cached;
        }

        ElfSymbols? elf = null;
        string? why = null;
        if (path == VdsoImage.MappingName)
            elf = Vdso(mapping, out why);
        else if (path.EndsWith(" (deleted)", StringComparison.Ordinal))
            why = $"{path}: deleted since it was mapped; its frames are named module+offset";
        else if (ElfSymbols.TryLoad(path, out var error) is not { } loaded)
            why = error == ElfSymbols.PortableExecutable ? path + ": " + error
                : $"{path}: {error}; its frames are named module+offset";
        else if (Recorded(mapping) is { } recorded && loaded.BuildId is { } now
                 && !recorded.AsSpan().SequenceEqual(now))
            why = $"{path}: build-id {Hex(now)} differs from the recorded {Hex(recorded)} (the file changed " +
                "since the recording); its frames are named module+offset, not with the new file's symbols";
        else
        {
            elf = loaded;
            if (_debugSymbols && !loaded.HasSymtab && FindDebugFile(loaded) is { } debug) loaded.UseSymbolsOf(debug);
        }

        if (why is not null)
        {
            if (mapping.Executable) _note(path, why);
            else _unsaid[path] = why;
        }

        _files[path] = elf;
        return elf;
    }

    /// <summary>
    /// The recorded vDSO image: perf's build-id cache copy of the recorded build-id, else the running kernel's when it
    /// has that build-id; with none recorded, the running kernel's only when the trace was recorded on it.
    /// </summary>
    private ElfSymbols? Vdso(ModuleMapping mapping, out string? why)
    {
        why = null;
        if (Recorded(mapping) is { Length: > 0 } recorded)
        {
            var hex = Hex(recorded);
            foreach (var candidate in VdsoImage.CachePaths(_options.BuildIdCaches, hex))
                if (ElfSymbols.TryLoad(candidate, out _) is { BuildId: { } id } cached
                    && id.AsSpan().SequenceEqual(recorded))
                    return cached;
            if (RunningVdso() is { BuildId: { } running } image && running.AsSpan().SequenceEqual(recorded))
                return image;
            why = $"{VdsoImage.MappingName}: the recorded vDSO (build-id {hex}) is neither in perf's build-id cache " +
                $"({string.Join(", ", _options.BuildIdCaches)}) nor the running kernel's; its frames are named " +
                "[vdso]+offset";
            return null;
        }

        if (_options.RecordedOnRunningKernel && RunningVdso() is { } same) return same;
        why = $"{VdsoImage.MappingName}: no build-id was recorded for it and the trace is not from the running " +
            "kernel (or its vDSO cannot be read); its frames are named [vdso]+offset";
        return null;
    }

    private ElfSymbols? RunningVdso() =>
        _options.RunningVdso() is { } image ? ElfSymbols.TryLoadImage(image, VdsoImage.MappingName, out _) : null;

    private byte[]? Recorded(ModuleMapping mapping) =>
        mapping.BuildId ?? _recordedBuildIds.GetValueOrDefault(mapping.Path);

    /// <summary>
    /// A debug file with .symtab: by build-id, then by .gnu_debuglink (gdb's and perf's search order).
    /// </summary>
    private ElfSymbols? FindDebugFile(ElfSymbols elf)
    {
        var candidates = new List<string>();
        if (elf.BuildId is { Length: > 1 } id)
        {
            var hex = Hex(id);
            foreach (var root in _options.DebugDirectories)
                candidates.Add(System.IO.Path.Combine(root, ".build-id", hex[..2], hex[2..] + ".debug"));
        }

        if (elf.DebugLink is { } link && System.IO.Path.GetDirectoryName(elf.Path) is { } dir)
        {
            candidates.Add(System.IO.Path.Combine(dir, link));
            candidates.Add(System.IO.Path.Combine(dir, ".debug", link));
            foreach (var root in _options.DebugDirectories)
                candidates.Add(System.IO.Path.Combine(root, dir.TrimStart('/'), link));
        }

        foreach (var candidate in candidates)
        {
            if (candidate == elf.Path || ElfSymbols.TryLoad(candidate, out _) is not { HasSymtab: true } debug)
                continue;
            // A debug file found by name must be the same build; one found by build-id is by construction.
            if (elf.BuildId is { } want && debug.BuildId is { } have && !want.AsSpan().SequenceEqual(have)) continue;
            return debug;
        }

        return null;
    }

    private static string Hex(byte[] bytes) => Convert.ToHexString(bytes).ToLowerInvariant();
}
