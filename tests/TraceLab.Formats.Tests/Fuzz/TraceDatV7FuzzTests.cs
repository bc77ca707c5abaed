using System.Buffers.Binary;
using TraceLab.Analyzers;
using TraceLab.Core;
using TraceLab.Formats.Tests.TraceDatV7;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Formats.Tests.Fuzz;

/// <summary>
/// Thousands of truncated and corrupted variants of compressed v7 traces, each read through a full analysis,
/// strictly and salvaging: success or a one-line <see cref="TraceFormatException"/> naming the file; never another
/// exception, a hang or a runaway allocation; a salvaging read of a file whose metadata is intact succeeds, and one
/// cut in its CPU data reports the damage and fewer events.
/// </summary>
public sealed class TraceDatV7FuzzTests(ITestOutputHelper output) : IDisposable
{
    private const int Seed = 20261125;
    private const int PagesPerCpu = 24;
    private const int MetadataCuts = 300;
    private const int DataCutStride = 97;
    private const int RandomFlips = 1500;
    private const string ZlibSource = "tracecmd/hip24_test_guest_v7zlib.dat";
    // A read of the base takes 0.1-0.9 s on a shared, loaded 2-core machine (one base decodes a whole kernel's event
    // formats); a hang never ends, so a generous limit only delays its report.
    private static readonly TimeSpan CaseTimeout = TimeSpan.FromSeconds(30);
    // Beyond what reading the intact base allocates (a whole kernel's event formats, then the analysis).
    private const long MaxExtraAllocatedBytes = 64L << 20;

    private readonly TempDirectory _dir = new("tracelab-fuzz7-");

    public void Dispose() => _dir.Dispose();


    /// <summary>
    /// A real zlib v7 file (trace-cmd 3.2, tsc2nsec, TIME_SHIFT) cut to its first pages, rewritten with zlib and zstd.
    /// </summary>
    [ExternalTraceTheory(ZlibSource)]
    [InlineData("zlib")]
    [InlineData("zstd")]
    public void Damaged_variants_of_a_real_compressed_v7_trace_fail_cleanly_or_salvage(string compression)
    {
        var basePath = _dir.File($"base-{compression}.dat");
        var layout =
            V7Writer.Rewrite(ExternalTraces.PathOf(ZlibSource), basePath, compression, PagesPerCpu, dropSymbols: true);
        Fuzz(basePath, Cases(File.ReadAllBytes(basePath), layout, dataIsLast: true));
    }

    /// <summary>
    /// trace-cmd's own zstd layout (options with the BUFFER option after the data, so a cut loses the data's
    /// description and only strict failure is expected), from a TraceLab capture converted by `trace-cmd convert`.
    /// </summary>
    [TraceCmdConvertFact]
    public void Damaged_variants_of_a_trace_cmd_zstd_v7_trace_fail_cleanly_or_salvage()
    {
        var sample = File.ReadAllBytes(Path.Combine(RepoPaths.SampleTraces, "timemutex-cs", "trace.dat"));
        var v6 = _dir.File("base-v6.dat");
        File.WriteAllBytes(v6, FuzzBaseTrace.Build(sample, PagesPerCpu));
        var basePath = _dir.File("base-tracecmd-zstd.dat");
        var (exit, _, stderr) = ProcessOutput.Run(
            "trace-cmd", "convert", "-i", v6, "-o", basePath, "--file-version", "7", "--compression", "zstd");
        Assert.True(exit == 0, stderr);
        var bytes = File.ReadAllBytes(basePath);
        var cpus = CpuRanges(basePath);
        var layout = new V7Layout(4096, cpus.Min(c => c.Offset), cpus, []);
        Fuzz(basePath, Cases(bytes, layout, dataIsLast: false));
    }

    private void Fuzz(string basePath, List<FuzzCase> cases)
    {
        var baseTrace = File.ReadAllBytes(basePath);
        var intact = FuzzRead.TraceDat(basePath, salvage: false);
        Assert.Null(intact.Error);
        Assert.True(intact.Info!.EventCount > 1000, $"the base trace has only {intact.Info.EventCount} events");

        var run =
            FuzzRunner.Run(_dir.Path, baseTrace, cases, CaseTimeout, intact.AllocatedBytes + MaxExtraAllocatedBytes,
            (c, path, salvage, o) => Judge(c, path, salvage, o, intact.Info.EventCount));
        output.WriteLine(
            run.Describe(cases.Count, $"a {baseTrace.Length}-byte v7 trace ({intact.Info.EventCount} events)")
            + $" (intact: {intact.AllocatedBytes >> 20} MB)");
        Assert.True(run.Failures.Count == 0,
            $"{run.Failures.Count} failing cases:\n" + string.Join("\n", run.Failures.Take(30)));
        run.AssertBothOutcomesCommon(cases.Count);
    }

    /// <summary>Cuts, random overwrites and adversarial values in every field the layout names.</summary>
    private static List<FuzzCase> Cases(byte[] trace, V7Layout layout, bool dataIsLast)
    {
        var cases = new List<FuzzCase>();
        var dataEnd = layout.Cpus.Max(c => c.Offset + c.Size);
        var stride = Math.Max(1, layout.DataStart / MetadataCuts);
        for (var at = 0; at < layout.DataStart; at += stride) cases.Add(new($"cut at {at} (metadata)", at, [], false));
        for (var at = layout.DataStart; at < dataEnd; at += DataCutStride)
            cases.Add(new($"cut at {at} (CPU data)", at, [], MetadataIntact: dataIsLast));

        var rng = new Random(Seed);
        for (var i = 0; i < RandomFlips; i++)
        {
            // Half in the metadata, half in the CPU data, where most bytes are.
            var inData = i % 2 == 1;
            var at = inData ? rng.Next(layout.DataStart, dataEnd) : rng.Next(0, layout.DataStart);
            var bytes = new byte[rng.Next(1, 5)];
            rng.NextBytes(bytes);
            cases.Add(new($"{bytes.Length} random bytes at {at}", null, [(at, bytes)],
                MetadataIntact: inData && InData(layout, at)));
        }

        foreach (var (at, name) in layout.Fields)
        {
            var inData = InData(layout, at);
            foreach (var value in new ulong[] { 0, 1, 0xFFFF_FFFF, 0x7FFF_FFFF, 0x0100_0000, ulong.MaxValue, (ulong)at,
                (ulong)layout.DataStart })
            {
                var b = new byte[name.Contains("offset", StringComparison.Ordinal)
                    || name.Contains("header", StringComparison.Ordinal) ? 8 : 4];
                if (b.Length == 8) BinaryPrimitives.WriteUInt64LittleEndian(
                    b, value);
                else BinaryPrimitives.WriteUInt32LittleEndian(b, (uint)value);
                // A section header's size field is 8 bytes into it; its id and flags at 0 and 2.
                var target = name.Contains("header", StringComparison.Ordinal) ? at + 8 : at;
                cases.Add(new($"{name} at {at} set to {value:X}", null, [(target, b)], MetadataIntact: inData));
                if (name.Contains("header", StringComparison.Ordinal))
                    cases.Add(new($"{name} at {at}: id/flags {value:X}", null,
                        [(at, BitConverter.GetBytes((uint)value))], false));
            }

            // Chunk sizes: the decompressed size (4 bytes on) as a bomb and as zero.
            if (name == "chunk sizes")
            {
                cases.Add(
                    new($"chunk at {at} declares 4 GiB", null, [(at + 4, BitConverter.GetBytes(uint.MaxValue))], true));
                cases.Add(
                    new($"chunk at {at} declares 4 MiB", null, [(at + 4, BitConverter.GetBytes(4u << 20))], true));
                cases.Add(new($"chunk at {at} declares one byte less", null,
                    [(at + 4, BitConverter.GetBytes(
                        BinaryPrimitives.ReadUInt32LittleEndian(trace.AsSpan(at + 4)) - 1))], true));
            }
        }

        return cases;
    }

    private static bool InData(V7Layout layout, int at) =>
        layout.Cpus.Any(c => at >= c.Offset && at < c.Offset + c.Size);

    private static List<(int Offset, int Size)> CpuRanges(string path)
    {
        using var handle = File.OpenHandle(path);
        var meta = TraceDatMetadataParser.Parse(new BoundedFileReader(handle, path));
        return meta.Data.Where(d => d.Size > 0).Select(d => ((int)d.Offset, (int)d.Size + 4)).ToList();
    }

    /// <summary>Null when the outcome of a read that ended is allowed, else what went wrong.</summary>
    private static string? Judge(FuzzCase c, string path, bool salvage, FuzzOutcome o, long intactEvents)
    {
        switch (o.Error)
        {
            case null when c.CutAt is not null && salvage && c.MetadataIntact &&
                           (o.Info!.Damage is null || o.Info.EventCount >= intactEvents):
                return $"a cut trace salvaged {o.Info.EventCount} of {intactEvents} events, damage: "
                    + $"{o.Info.Damage ?? "none"}";
            case null:
                return null;
            case TraceFormatException e when e.File != path
                || !e.Message.StartsWith(path + ": at offset ", StringComparison.Ordinal):
                return $"TraceFormatException without the file and offset: {e.Message}";
            case TraceFormatException e when e.Message.Contains('\n'):
                return $"a message of more than one line: {e.Message}";
            case TraceFormatException e when salvage && c.MetadataIntact:
                return $"salvaging failed although only CPU data was damaged: {e.Message}";
            case TraceFormatException:
                return null;
            default:
                return $"{o.Error.GetType().Name}: {o.Error.Message}\n{o.Error.StackTrace}";
        }
    }
}
