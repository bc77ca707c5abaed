namespace TraceLab.IntegrationTests;

/// <summary>
/// The Native AOT build does what the JIT build does: the same report.json, report.md, report.html and chart files,
/// byte for byte, the same terminal output, the same Perfetto export, and the same one line and exit code on bad
/// input. The AOT build is published once per run (<see cref="NativeAotBuild"/>; about 2 minutes of CI on a quiet
/// 2-core machine, plus ~1 minute for the analyses).
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
        var (code, _) = AssertSameAnalysis(Path.Combine(RepoPaths.SampleTraces, relative));
        Assert.Equal(0, code);
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
    private (int Code, string Err) AssertSameAnalysis(string trace)
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
        return (jit.Code, jit.Err);
    }

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
