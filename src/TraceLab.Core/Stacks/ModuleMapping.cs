namespace TraceLab.Core;

/// <summary>
/// One memory mapping of a process (perf's MMAP/MMAP2 record, or a line of /proc/PID/maps): which file (or
/// anonymous region) lies at [<see cref="Start"/>, <see cref="Start"/> + <see cref="Length"/>) from when.
/// </summary>
/// <param name="Start">First address of the mapping.</param>
/// <param name="Length">Bytes mapped.</param>
/// <param name="FileOffset">Offset in the file of the mapping's first byte (pgoff).</param>
/// <param name="Path">The file, or a pseudo name ([heap], [vdso], //anon, [kernel.kallsyms]_text).</param>
/// <param name="BuildId">The file's GNU build-id as the recording saw it (MMAP2 with build-id); null when not
/// recorded.</param>
/// <param name="Executable">The mapping is executable (PROT_EXEC; MMAP records are).</param>
/// <param name="Since">When the mapping appeared (trace clock, ns; 0: before the recording started).</param>
public sealed record ModuleMapping(ulong Start, ulong Length, ulong FileOffset, string Path, byte[]? BuildId,
    bool Executable, long Since)
{
    /// <summary>When the mapping ended (exec, munmap seen as a new mapping over it); long.MaxValue: never.</summary>
    public long Until { get; internal set; } = long.MaxValue;

    /// <summary>One past the last address mapped.</summary>
    public ulong End => Start + Length;

    /// <summary>True when the mapping holds <paramref name="address"/> at <paramref name="time"/>.</summary>
    public bool Holds(ulong address, long time) =>
        address >= Start && address - Start < Length && time >= Since && time < Until;

    /// <summary>The build-id as lowercase hex; null when not recorded.</summary>
    public string? BuildIdHex => BuildId is null ? null : Convert.ToHexString(BuildId).ToLowerInvariant();
}
