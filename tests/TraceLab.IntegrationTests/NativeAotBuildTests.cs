using System.IO.Compression;
using System.Xml.Linq;

namespace TraceLab.IntegrationTests;

/// <summary>
/// `dotnet tool install` gives a linux-x64 user the Native AOT build, and it does what the JIT build does: the same
/// report.json, report.md, report.html and chart files, byte for byte, the same terminal output, the same Perfetto
/// export, and the same one line and exit code on bad input. The tool is packed and installed once per run
/// (<see cref="NativeAotBuild"/>; a few minutes of CI on a quiet 2-core machine, plus ~1 minute for the analyses).
/// </summary>
public sealed class NativeAotBuildTests(NativeAotBuild build) : IClassFixture<NativeAotBuild>
{
    public static TheoryData<string> SampleTraces { get; } =
    [
        "timemutex-cs/trace.dat", "timemutex-mutex/trace.dat", "perf-timemutex-mutex/capture.perf.data",
    ];

    private const string LisaV6 = "tracecmd/lisa_trappy_tests_trace_v6.dat";
    private const string RtAppV6 = "tracecmd/lisa_example_rtapp_v6.dat";
    private const string GuestTaskset = "tracecmd/hip24_taskset_guest_v7zlib.dat";
    private const string Guest = "tracecmd/hip24_test_guest_v7zlib.dat";
    private const string KvmHost = "tracecmd/hip24_test_host_kvm_v7zlib.dat";
    private const string PerfZstd = "perf/perfparser_parallel_static_gcc.zstd.perf.data";
    private const string Etl = "etw/etlparser_ShutdownPerfDiagLogger.etl";

    [NativeAotTheory]
    [MemberData(nameof(SampleTraces))]
    public void Analyze_of_a_sample_trace_is_byte_identical_to_the_JIT_build(string relative)
    {
        var (code, _) = AssertSameAnalysis(Path.Combine(RepoPaths.SampleTraces, relative), chartsExpected: true);
        Assert.Equal(0, code);
    }

    [NativeAotFact]
    public void Dotnet_tool_install_gives_the_native_executable_with_the_chart_libraries()
    {
        var command = new FileInfo(build.Executable);
        var executable = command.ResolveLinkTarget(returnFinalTarget: true)?.FullName ?? command.FullName;
        // The framework-dependent package (tracelab.any) would have installed tracelab.dll, started by dotnet.
        Assert.Empty(Directory.EnumerateFiles(build.ToolPath, "tracelab.dll", SearchOption.AllDirectories));
        Assert.True(ContainsAscii(File.ReadAllBytes(executable), "__managedcode"),
            $"{executable} has no __managedcode section: not a Native AOT executable");
        // The charts' native libraries are loaded from the executable's own folder.
        var folder = Path.GetDirectoryName(executable)!;
        foreach (var library in new[] { "libSkiaSharp.so", "libHarfBuzzSharp.so" })
            Assert.True(File.Exists(Path.Combine(folder, library)), $"{library} is not beside {executable}");
    }

    [NativeAotFact]
    public void The_tool_package_names_the_Native_AOT_package_and_the_framework_dependent_fallback()
    {
        _ = build.Executable;
        var pointer = Directory.GetFiles(build.PackagesPath, "tracelab.*.nupkg")
            .Single(f => !Path.GetFileName(f).StartsWith("tracelab.linux-x64.", StringComparison.Ordinal));
        using var zip = ZipFile.OpenRead(pointer);
        // The RID-less package carries no build, only which package each platform gets.
        Assert.Equal(["DotnetToolSettings.xml"],
            zip.Entries.Where(e => e.FullName.StartsWith("tools/", StringComparison.Ordinal)).Select(e => e.Name));
        using var settings = zip.Entries.Single(e => e.Name == "DotnetToolSettings.xml").Open();
        var rids = XDocument.Load(settings).Descendants("RuntimeIdentifierPackage")
            .Select(e => ((string?)e.Attribute("RuntimeIdentifier"), (string?)e.Attribute("Id")));
        Assert.Equal([("linux-x64", "tracelab.linux-x64"), ("any", "tracelab.any")], rids);
    }

    [NativeAotFact]
    public void Help_of_the_installed_tool_is_the_JIT_build_s()
    {
        var jit = Run(NativeAotBuild.Jit, "--help");
        var aot = Run([build.Executable], "--help");
        Assert.Equal((0, ""), (jit.Code, jit.Err));
        Assert.Contains("analyze", jit.Out, StringComparison.Ordinal);
        Assert.Equal((jit.Code, jit.Out, jit.Err), (aot.Code, aot.Out, aot.Err));
    }

    [NativeAotTheory(LisaV6, RtAppV6, GuestTaskset, Guest, KvmHost, PerfZstd, Etl)]
    [InlineData(LisaV6)]
    [InlineData(RtAppV6)]
    [InlineData(GuestTaskset)]
    [InlineData(Guest)]
    [InlineData(KvmHost)]
    [InlineData(PerfZstd)]
    [InlineData(Etl)]
    public void Analyze_of_an_external_trace_is_byte_identical_to_the_JIT_build(string relative) =>
        AssertSameAnalysis(ExternalTraces.PathOf(relative));

    private const string ThpMode = "/sys/kernel/mm/transparent_hugepage/enabled";

    [NativeAotFact]
    public void The_installed_tool_runs_with_the_64_MiB_gen0_budget_its_build_sets()
    {
        // NativeAot.props bakes GCgen0size in (docs/performance.md#gen0-budget); TRACELAB_STAGES=1 prints it on its
        // first line (the JIT build, which has none, prints nothing there).
        using var dir = new TempDirectory("tracelab-aot-gen0");
        var trace = Path.Combine(RepoPaths.SampleTraces, "timemutex-mutex", "trace.dat");
        var (code, _, err) = ProcessOutput.Run("env",
            ["TRACELAB_STAGES=1", "TRACELAB_HUGE_PAGES=1", build.Executable, "analyze", trace, "--out", dir.File("out"),
                "--no-charts"]);
        Assert.True(code == 0, err);
        var first = err.Split('\n', StringSplitOptions.RemoveEmptyEntries)[0];
        Assert.StartsWith("stage start to Main", first, StringComparison.Ordinal);
        Assert.EndsWith("; gen-0 budget 64 MiB", first, StringComparison.Ordinal);
        // And its heap goes uncollected after the collection that starts the region (docs/performance.md#no-gc-region).
        var lines = err.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Equal("heap: no garbage collection for the first 96 MiB allocated", lines[1]);
        // And where Linux gives huge pages on request, the heap's range asks for them when asked to
        // (docs/performance.md#huge-pages-measured).
        Assert.StartsWith("heap: ", lines[2], StringComparison.Ordinal);
        if (File.Exists(ThpMode) && File.ReadAllText(ThpMode).Contains("[madvise]", StringComparison.Ordinal))
            Assert.Equal(
                "heap: transparent huge pages advised for 4096 MiB of the collector's address range, 512 MiB of it "
                + "writable ahead of the collector (TRACELAB_HUGE_PAGES=1)", lines[2]);
        Assert.StartsWith("stage exit", lines[^1], StringComparison.Ordinal);
        Assert.Contains(" 1/1/1 garbage collections ", lines[^1], StringComparison.Ordinal);
    }

    [NativeAotFact]
    public void Perfetto_export_writes_the_same_bytes()
    {
        using var dir = new TempDirectory("tracelab-aot-export");
        var trace = Path.Combine(RepoPaths.SampleTraces, "timemutex-mutex", "trace.dat");
        var jit = Run(NativeAotBuild.Jit, "export", trace, "--to", "perfetto", "-o", dir.File("jit.pftrace"));
        var aot = Run([build.Executable], "export", trace, "--to", "perfetto", "-o", dir.File("aot.pftrace"));
        Assert.Equal((0, ""), (jit.Code, jit.Err));
        Assert.Equal((0, ""), (aot.Code, aot.Err));
        var bytes = File.ReadAllBytes(dir.File("jit.pftrace"));
        Assert.True(bytes.Length > 100_000, $"the JIT build's export is only {bytes.Length} bytes");
        Assert.Equal(bytes, File.ReadAllBytes(dir.File("aot.pftrace")));
    }

    [NativeAotFact]
    public void Bad_input_gives_the_same_one_line_and_exit_code()
    {
        using var dir = new TempDirectory("tracelab-aot-bad");
        var whole = File.ReadAllBytes(Path.Combine(RepoPaths.SampleTraces, "timemutex-cs", "trace.dat"));
        var truncated = dir.File("truncated.dat");
        File.WriteAllBytes(truncated, whole[..(whole.Length / 3)]);
        string[][] cases =
        [
            ["analyze", truncated, "--out", dir.File("out-truncated")],
            ["analyze", dir.File("missing.dat"), "--out", dir.File("out-missing")],
            ["analyze", truncated, "--no-such-option"],
        ];
        foreach (var args in cases)
        {
            var jit = Run(NativeAotBuild.Jit, args);
            var aot = Run([build.Executable], args);
            var what = string.Join(' ', args[..1].Concat(args[2..]));
            Assert.True(jit.Code is 1 or 2, $"{what}: the JIT build exited {jit.Code}");
            Assert.Single(jit.Err.Split('\n', StringSplitOptions.RemoveEmptyEntries));
            Assert.Equal((jit.Code, jit.Err, jit.Out), (aot.Code, aot.Err, aot.Out));
        }
    }

    /// <summary>
    /// Analyzes <paramref name="trace"/> with both builds into the same folder (one after the other, so paths in the
    /// output are the same) and asserts the same exit code, stderr, terminal output and files.
    /// </summary>
    private (int Code, string Err) AssertSameAnalysis(string trace, bool chartsExpected = false)
    {
        using var dir = new TempDirectory("tracelab-aot-analyze");
        var outDir = dir.File("out");
        var jit = Run(NativeAotBuild.Jit, "analyze", trace, "--out", outDir);
        var jitFiles = Files(outDir);
        if (Directory.Exists(outDir)) Directory.Delete(outDir, recursive: true);
        var aot = Run([build.Executable], "analyze", trace, "--out", outDir);
        var aotFiles = Files(outDir);

        Assert.Equal((jit.Code, jit.Err), (aot.Code, aot.Err));
        Assert.Equal(jit.Out, aot.Out);
        Assert.Equal(jitFiles.Keys, aotFiles.Keys);
        foreach (var (name, bytes) in jitFiles)
            Assert.True(bytes.AsSpan().SequenceEqual(aotFiles[name]), $"{name} differs between the JIT and AOT builds");
        if (jit.Code == 0)
            Assert.Contains("report.json", jitFiles.Keys);
        if (chartsExpected)
            Assert.Contains(jitFiles.Keys, name => name.StartsWith("chart-", StringComparison.Ordinal)
                                                   && name.EndsWith(".png", StringComparison.Ordinal));
        return (jit.Code, jit.Err);
    }

    private static bool ContainsAscii(byte[] bytes, string text) =>
        bytes.AsSpan().IndexOf(System.Text.Encoding.ASCII.GetBytes(text)) >= 0;

    private static SortedDictionary<string, byte[]> Files(string dir)
    {
        var files = new SortedDictionary<string, byte[]>(StringComparer.Ordinal);
        if (Directory.Exists(dir))
            foreach (var f in Directory.GetFiles(dir)) files[Path.GetFileName(f)] = File.ReadAllBytes(f);
        return files;
    }

    private static (int Code, string Out, string Err) Run(string[] command, params string[] args) =>
        ProcessOutput.Run(command[0], [.. command[1..], .. args]);
}
