using System.Globalization;
using TraceLab.Core;
using TraceLab.Formats.Symbols;

namespace TraceLab.Formats.Tests.Symbols;

/// <summary>
/// Frames in the vDSO ([vdso], no file on disk) are named, and unwound through, with the recorded image: perf's
/// build-id cache copy (ROOT/[vdso]/BUILD-ID/vdso), else the running kernel's when it is the recorded one (same
/// build-id; without a recorded build-id, the same kernel). The running image is this process's own mapping; its
/// symbols are checked against nm's reading of the same bytes.
/// </summary>
public sealed class VdsoTests : IDisposable
{
    private const int Pid = 777;
    private const ulong Base = 0x7ffd_1234_0000;
    private readonly string _dir = Directory.CreateTempSubdirectory("tracelab-vdso-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    /// <summary>Why the running vDSO cannot be tested here (not Linux, no vDSO mapped); null when it can.</summary>
    private static string? Missing(bool nm = false) =>
        !OperatingSystem.IsLinux() ? "the vDSO is Linux's"
        : VdsoImage.Running() is null ? "this process has no readable [vdso] mapping"
        : nm && !TestEnvironment.OnPath("nm") ? "nm not installed (apt-get install -y binutils)"
        : null;

    public sealed class VdsoFactAttribute : FactAttribute
    {
        public VdsoFactAttribute() => Skip = Missing();
    }

    public sealed class VdsoAndNmFactAttribute : FactAttribute
    {
        public VdsoAndNmFactAttribute() => Skip = Missing(nm: true);
    }

    private static ElfSymbols Running() =>
        ElfSymbols.TryLoadImage(VdsoImage.Running()!, VdsoImage.MappingName, out _)
        ?? throw new InvalidOperationException("the running vDSO is no ELF image");

    private static ProcessMaps Maps(byte[]? buildId)
    {
        var maps = new ProcessMaps();
        maps.Add(Pid, new ModuleMapping(Base, 0x2000, 0, VdsoImage.MappingName, buildId, Executable: true, Since: 0));
        return maps;
    }

    /// <summary>The address of clock_gettime's vDSO function in the mapping, and that function.</summary>
    private static (ulong Address, ElfSymbol Function) ClockGettime()
    {
        var vdso = Running();
        var f = vdso.Functions.First(s => s.Name.EndsWith("clock_gettime", StringComparison.Ordinal));
        // The image is mapped from its start: file offset = link address less the first PT_LOAD's.
        var offset = f.Start - vdso.Loads[0].Address + vdso.Loads[0].Offset;
        return (Base + offset + 5, f);
    }

    [VdsoAndNmFact]
    public void The_running_image_has_the_functions_and_call_frames_nm_finds_in_the_same_bytes()
    {
        var vdso = Running();
        Assert.NotNull(vdso.BuildId);
        Assert.NotNull(vdso.CallFrames);
        var file = Path.Combine(_dir, "vdso.so");
        File.WriteAllBytes(file, VdsoImage.Running()!);
        var nm = ProcessOutput.Lines("nm", "-D", "--defined-only", file)
            .Select(l => l.Split(' ', StringSplitOptions.RemoveEmptyEntries))
            .Where(p => p.Length == 3 && p[1] is "T" or "t" or "W")
            .Select(p => (ulong.Parse(p[0], NumberStyles.HexNumber, CultureInfo.InvariantCulture),
                p[2].Split('@')[0]))
            .ToHashSet();
        Assert.NotEmpty(nm);
        // Every function nm lists is one of ours at the same address (aliases: one name per address kept).
        foreach (var (address, name) in nm)
            Assert.Contains(vdso.Functions, f => f.Start == address);
        Assert.Contains(vdso.Functions, f => nm.Contains((f.Start, f.Name)));
    }

    [VdsoFact]
    public void A_recorded_build_id_finds_the_running_image_and_names_and_unwinds_the_frame()
    {
        var running = Running();
        var symbolizer = new StackSymbolizer(Maps(running.BuildId), options: new SymbolOptions { BuildIdCaches = [] });
        var (address, function) = ClockGettime();
        var frame = symbolizer.Frame(Pid, address, 10, kernel: false);
        Assert.Equal(VdsoImage.MappingName, frame.Module);
        Assert.Equal(function.Name, frame.Symbol);
        Assert.Equal(5ul, frame.Offset);
        Assert.Empty(symbolizer.Notes);

        var files = new ModuleFiles(null, new SymbolOptions { BuildIdCaches = [] }, (_, _) => { });
        var elf = files.File(Maps(running.BuildId).Find(Pid, address, 10)!);
        Assert.NotNull(elf?.CallFrames);
    }

    [VdsoFact]
    public void Perfs_build_id_cache_is_read_first_and_another_build_id_is_said_once_never_misnamed()
    {
        var image = VdsoImage.Running()!;
        var running = Running();
        var hex = Convert.ToHexString(running.BuildId!).ToLowerInvariant();
        var cached = Path.Combine(_dir, "[vdso]", hex, "vdso");
        Directory.CreateDirectory(Path.GetDirectoryName(cached)!);
        File.WriteAllBytes(cached, image);
        var (address, function) = ClockGettime();

        // The running image is not asked for: the cache has the recorded one.
        var asked = 0;
        var fromCache = new StackSymbolizer(Maps(running.BuildId), options: new SymbolOptions
        {
            BuildIdCaches = [_dir],
            RunningVdso = () =>
            {
                asked++;
                return null;
            },
        });
        Assert.Equal(function.Name, fromCache.Frame(Pid, address, 10, kernel: false).Symbol);
        Assert.Equal(0, asked);

        // Another kernel's vDSO: in no cache, not the running one: [vdso]+offset, said once.
        var other = new StackSymbolizer(Maps([1, 2, 3, 4]), options: new SymbolOptions { BuildIdCaches = [_dir] });
        var frame = other.Frame(Pid, address, 10, kernel: false);
        Assert.Null(frame.Symbol);
        Assert.Equal(VdsoImage.MappingName, frame.Module);
        Assert.Equal(address - Base, frame.Offset);
        other.Frame(Pid, address + 1, 10, kernel: false);
        var note = Assert.Single(other.Notes);
        Assert.Contains("build-id 01020304", note, StringComparison.Ordinal);
    }

    [VdsoFact]
    public void Without_a_recorded_build_id_the_running_image_is_used_only_for_a_trace_of_this_kernel()
    {
        var (address, function) = ClockGettime();
        var same = new StackSymbolizer(Maps(null), options: new SymbolOptions
        {
            BuildIdCaches = [],
            RecordedOnRunningKernel = true,
        });
        Assert.Equal(function.Name, same.Frame(Pid, address, 10, kernel: false).Symbol);

        var another = new StackSymbolizer(Maps(null), options: new SymbolOptions { BuildIdCaches = [] });
        Assert.Null(another.Frame(Pid, address, 10, kernel: false).Symbol);
        Assert.Contains("no build-id was recorded", Assert.Single(another.Notes), StringComparison.Ordinal);
    }

    [Fact]
    public void The_vdso_line_of_a_maps_text_gives_its_range()
    {
        var maps = """
            55d0c0a00000-55d0c0a21000 r--p 00000000 fe:01 1234 /usr/bin/cat
            7ffd4c1f0000-7ffd4c211000 rw-p 00000000 00:00 0 [stack]
            7ffd4c3fa000-7ffd4c3fe000 r--p 00000000 00:00 0 [vvar]
            7ffd4c3fe000-7ffd4c400000 r-xp 00000000 00:00 0 [vdso]
            """;
        Assert.Equal((0x7ffd4c3fe000ul, 0x7ffd4c400000ul), VdsoImage.RangeIn(new StringReader(maps)));
        Assert.Null(VdsoImage.RangeIn(new StringReader("7ffd-zz r-xp 00000000 00:00 0 [vdso]")));
        Assert.Null(VdsoImage.RangeIn(new StringReader("7ffd4c3fe000-7ffd4c3fe000 r-xp 0 00:00 0 [vdso]")));
        Assert.Null(VdsoImage.RangeIn(new StringReader("")));
    }

    /// <summary>Damaged copies of the image: each reads or is refused with a reason; none throws.</summary>
    [VdsoFact]
    public void Damaged_images_read_or_are_refused_without_throwing()
    {
        var intact = VdsoImage.Running()!;
        var random = new Random(20261129);
        int read = 0, refused = 0, withFrames = 0;
        for (var i = 0; i < 2000; i++)
        {
            var bytes = (byte[])intact.Clone();
            var cut = i % 10 == 0 ? random.Next(bytes.Length) : bytes.Length;
            for (var f = 0; f < 1 + i % 16; f++) bytes[random.Next(cut)] = (byte)random.Next(256);
            var elf = ElfSymbols.TryLoadImage(bytes[..cut], VdsoImage.MappingName, out var error);
            if (elf is null)
            {
                Assert.False(string.IsNullOrEmpty(error));
                refused++;
                continue;
            }

            read++;
            if (elf.CallFrames is { } cfi && cfi.Count > 0) withFrames++;
            foreach (var f in elf.Functions) elf.Function(f.Start + 1);
        }

        Assert.Equal(2000, read + refused);
        Assert.True(withFrames > 500, $"only {withFrames} damaged images reached the call frame reader");
    }
}
