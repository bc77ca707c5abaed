namespace TraceLab.Formats.Symbols;

/// <summary>
/// The vDSO: the small ELF image the kernel maps into every process as <c>[vdso]</c> (clock_gettime, gettimeofday,
/// getcpu, and their syscall fallbacks). It is no file on disk, so its symbols and call frame information come from
/// a copy: perf's build-id cache (perf record copies it to <c>~/.debug/[vdso]/BUILD-ID/vdso</c>), else the running
/// kernel's own, read from this process's mapping — what perf report does when its cache lacks one. Either is used
/// only when it is the recorded image (same build-id; without one, the same kernel release).
/// </summary>
public static class VdsoImage
{
    /// <summary>The mapping's name in /proc/PID/maps and perf's MMAP records.</summary>
    public const string MappingName = "[vdso]";

    private static readonly Lazy<byte[]?> s_running = new(ReadRunning);

    /// <summary>The running kernel's vDSO, copied once from this process; null when it cannot be read.</summary>
    public static byte[]? Running() => s_running.Value;

    /// <summary>Where perf's build-id cache keeps the vDSO of <paramref name="buildIdHex"/> under each root.</summary>
    public static IEnumerable<string> CachePaths(IEnumerable<string> roots, string buildIdHex) =>
        roots.Select(root => Path.Combine(root, MappingName, buildIdHex, "vdso"));

    /// <summary>
    /// perf's build-id cache roots: $PERF_BUILDID_DIR when set (perf's own override), else ~/.debug (perf's
    /// default buildid.dir).
    /// </summary>
    public static IReadOnlyList<string> DefaultCacheRoots()
    {
        if (Environment.GetEnvironmentVariable("PERF_BUILDID_DIR") is { Length: > 0 } dir) return [dir];
        var home = Environment.GetFolderPath(Environment.SpecialFolder.UserProfile);
        return home.Length > 0 ? [Path.Combine(home, ".debug")] : [];
    }

    /// <summary>The address range of the [vdso] line in <paramref name="maps"/> text; null if none.</summary>
    public static (ulong Start, ulong End)? RangeIn(TextReader maps)
    {
        while (maps.ReadLine() is { } line)
        {
            if (!line.EndsWith(" " + MappingName, StringComparison.Ordinal)) continue;
            return ProcMapsLine.TryParse(line, out var start, out var end, out _) ? (start, end) : null;
        }

        return null;
    }

    private static byte[]? ReadRunning()
    {
        try
        {
            (ulong Start, ulong End)? range;
            using (var maps = new StreamReader("/proc/self/maps")) range = RangeIn(maps);
            // The vDSO is a page or two; anything else is not it.
            if (range is not { } r || r.End - r.Start > 1 << 20 || r.Start > long.MaxValue) return null;
            var image = new byte[r.End - r.Start];
            using var handle = File.OpenHandle("/proc/self/mem");
            var read = 0;
            while (read < image.Length)
            {
                var n = RandomAccess.Read(handle, image.AsSpan(read), (long)r.Start + read);
                if (n <= 0) return null;
                read += n;
            }

            return image;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or NotSupportedException)
        {
            return null;
        }
    }
}
