using System.Collections.Concurrent;
using TraceLab.Analyzers;
using TraceLab.Core;
using TraceLab.Formats.Etl;
using TraceLab.Formats.Registry;
using TraceLab.Formats.Tests.Fuzz;
using TraceLab.Formats.TraceDat;
using static TraceLab.Formats.Tests.Etl.EtlTestWriter;
using static TraceLab.Formats.Tests.Etw.EtwPayloads;

namespace TraceLab.Formats.Tests.Etl;

/// <summary>
/// Truncated and corrupted variants of real and built .etl files, each read through a full analysis, strictly and
/// salvaging. Allowed: success or a <see cref="TraceFormatException"/> naming the file; anything else, a hang or a
/// runaway allocation fails with the case. A third of the corruptions hit buffer headers, a third event headers.
/// </summary>
public sealed class EtlFuzzTests : IDisposable
{
    private static readonly bool[] StrictThenSalvage = [false, true];
    private static readonly TimeSpan CaseTimeout = TimeSpan.FromSeconds(10);
    private const long MaxAllocatedBytes = 96L << 20;
    private const ulong KernelKey = 0xffff_c000_0000_0100, UserKey = 0xffff_c000_0000_0200;

    private readonly ITestOutputHelper _output;
    private readonly string _dir = Directory.CreateTempSubdirectory("tracelab-etlfuzz-").FullName;

    public EtlFuzzTests(ITestOutputHelper output) => _output = output;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    [Fact]
    public void Damaged_variants_of_a_built_trace_fail_cleanly_or_salvage()
    {
        var w = new EtlTestWriter { BufferSize = 2048, Compress = i => i % 3 == 0 };
        for (var i = 0; i < 600; i++)
        {
            var cpu = i % 3;
            w.Add(cpu, PerfInfo(8, 0x0524, 2, Raw(i * 1_000L), CSwitch(100 + i % 7, 100 + (i + 1) % 7, 9, 8, 6,
                1, Formats.Etw.KThreadState.Waiting)));
            // Stack walks after most switches (the incoming thread's), module rundowns now and then.
            if (i % 4 != 3)
                w.Add(cpu, SystemEvent(8, 0x2020, 2, 100 + i % 7, 10, Raw(i * 1_000L), EtlStackWalkTests.StackWalk(
                    Raw(i * 1_000L), 10, 100 + i % 7, 0xffff_f800_0000_1000, 0x7ff6_0000_1000 + (ulong)(i % 13))));
            // Cached stacks after the others: key references, keys leaving the cache now and then.
            else
            {
                w.Add(cpu, SystemEvent(8, 0x2025, 2, 100 + i % 7, 10, Raw(i * 1_000L),
                    EtlStackWalkTests.KeyReference(Raw(i * 1_000L), 10, 100 + i % 7, KernelKey + (ulong)(i % 5))));
                w.Add(cpu, SystemEvent(8, 0x2026, 2, 100 + i % 7, 10, Raw(i * 1_000L),
                    EtlStackWalkTests.KeyReference(Raw(i * 1_000L), 10, 100 + i % 7, UserKey + (ulong)(i % 9))));
            }
            if (i % 40 == 39)
                w.Add(cpu, SystemEvent(8, 0x2023, 2, 0, 0, Raw(i * 1_000L + 5),
                    EtlStackWalkTests.KeyDefinition(UserKey + (ulong)(i % 9), 0x7ff6_0000_2000 + (ulong)i)));
            if (i % 100 == 0)
                w.Add(cpu, SystemEvent(8, 0x0A03, 3, 0, 10, Raw(i * 1_000L + 4),
                    EtlStackWalkTests.Image(0x7ff6_0000_0000, 0x10000, 10, $"C:\\m{i}.dll")));
            if (i % 5 == 0) w.Add(cpu, Compact(8, 0x0532, 2, 100 + i % 7, 10, Raw(i * 1_000L + 1),
                ReadyThread(100 + i % 5)));
            if (i % 50 == 0) w.Add(cpu, SystemEvent(8, 0x0503, 3, 100, 10, Raw(i * 1_000L + 2), Thread(8, 10,
                100 + i % 7, $"t{i}")));
            if (i % 97 == 0) w.Add(cpu, WithEventHeader(8, Guid.NewGuid(), 3, 0, 0, 1, 2, Raw(i * 1_000L + 3),
                new byte[20], (11, new byte[30])));
        }

        // The session's end: every key's frames.
        for (var k = 0UL; k < 9; k++)
        {
            w.Add(0, SystemEvent(8, 0x2024, 2, 0, 0, Raw(700_000L + (long)k),
                EtlStackWalkTests.KeyDefinition(KernelKey + k, 0xffff_f800_0000_2000 + k, 0xffff_f800_0000_3000)));
            w.Add(1, SystemEvent(8, 0x2024, 2, 0, 0, Raw(700_000L + (long)k),
                EtlStackWalkTests.KeyDefinition(UserKey + k, 0x7ff6_0000_4000 + k)));
        }

        Fuzz("built", w.Build(), cases: 2400, seed: 20261125);
    }

    [ExternalTraceFact(ExternalEtl.ShutdownLogger)]
    public void Damaged_variants_of_a_real_kernel_trace_fail_cleanly_or_salvage()
    {
        Fuzz("ShutdownPerfDiagLogger", File.ReadAllBytes(ExternalTraces.PathOf(ExternalEtl.ShutdownLogger)),
            cases: 300, seed: 1);
    }

    [ExternalTraceFact(ExternalEtl.PerfView)]
    public void Damaged_variants_of_a_real_merged_trace_fail_cleanly_or_salvage()
    {
        using var file = new ExternalEtl(ExternalEtl.PerfView);
        Fuzz("PerfView", File.ReadAllBytes(file.Path), cases: 120, seed: 2);
    }

    private void Fuzz(string name, byte[] baseFile, int cases, int seed)
    {
        var bufferSize = BitConverter.ToInt32(baseFile, 0);
        var rng = new Random(seed);
        var variants = Enumerable.Range(0, cases).Select(i => Damage(baseFile, bufferSize, i, cases, rng)).ToList();
        var failures = new ConcurrentQueue<string>();
        long clean = 0, rejected = 0, salvaged = 0;
        Parallel.ForEach(Enumerable.Range(0, variants.Count),
            new ParallelOptions { MaxDegreeOfParallelism = Environment.ProcessorCount }, i =>
        {
            var (what, bytes) = variants[i];
            var path = Path.Combine(_dir, $"{name}{i}.etl");
            File.WriteAllBytes(path, bytes);
            foreach (var salvage in StrictThenSalvage)
            {
                if (!FuzzTimeout.TryRead(() => Run(path, salvage), CaseTimeout, out var result))
                {
                    failures.Enqueue($"{what}: hang");
                    continue;
                }
                var (error, allocated, damaged) = result;
                if (allocated > MaxAllocatedBytes) failures.Enqueue($"{what}: allocated {allocated:N0} bytes");
                if (error is null)
                {
                    Interlocked.Increment(ref damaged ? ref salvaged : ref clean);
                    continue;
                }

                if (error is TraceFormatException && error.Message.StartsWith(path + ": ", StringComparison.Ordinal))
                {
                    Interlocked.Increment(ref rejected);
                    continue;
                }

                var mode = salvage ? "salvage" : "strict";
                failures.Enqueue($"{what} [{mode}]: {error.GetType().Name}: {error.Message}\n{error.StackTrace}");
            }

            File.Delete(path);
        });

        _output.WriteLine($"{name}: {cases} variants of a {baseFile.Length:N0}-byte .etl, {2 * cases} reads: "
            + $"{clean} read whole, {salvaged} salvaged, {rejected} rejected with a one-line error, "
            + $"{failures.Count} failures");
        Assert.True(failures.IsEmpty, $"{failures.Count} failing cases:\n" + string.Join("\n", failures.Take(20)));
        // Both outcomes common: reads that went through the decoder and the analysis (whole or salvaged), and reads
        // refused by a check. A fuzz whose damage never got past (or never tripped) the first check tests nothing.
        Assert.True(clean + salvaged >= cases * 2 / 10, $"only {clean + salvaged} of {2 * cases} reads completed");
        Assert.True(rejected >= cases * 2 / 10, $"only {rejected} of {2 * cases} reads were refused");
    }

    private static (string What, byte[] Bytes) Damage(byte[] baseFile, int bufferSize, int i, int cases, Random rng)
    {
        var bytes = (byte[])baseFile.Clone();
        switch (i % 4)
        {
            case 0:
                var cut = (int)((long)i * baseFile.Length / cases);
                return ($"cut at {cut}", bytes[..cut]);
            case 1:
                {
                    // A buffer header field (size, offsets, sequence, CPU, flags).
                    var buffers = Math.Max(1, baseFile.Length / Math.Max(bufferSize, 0x48));
                    var at =
                        Math.Min(baseFile.Length - 1, rng.Next(buffers) * Math.Max(bufferSize, 0x48) + rng.Next(0x48));
                    return Overwrite(bytes, at, rng, "buffer header");
                }
            case 2:
                {
                    // Just after a buffer header: the first event's marker, size and hook.
                    var buffers = Math.Max(1, baseFile.Length / Math.Max(bufferSize, 0x48));
                    var at = Math.Min(baseFile.Length - 1, rng.Next(buffers) * Math.Max(bufferSize,
                        0x48) + 0x48 + rng.Next(0x30));
                    return Overwrite(bytes, at, rng, "event header");
                }
            default:
                return Overwrite(bytes, rng.Next(bytes.Length), rng, "anywhere");
        }
    }

    private static (string, byte[]) Overwrite(byte[] bytes, int at, Random rng, string where)
    {
        var n = 1 + rng.Next(8);
        for (var k = 0; k < n && at + k < bytes.Length; k++)
            bytes[at + k] = rng.Next(4) == 0 ? (byte)0xFF : (byte)rng.Next(256);
        return ($"{n} bytes overwritten at {at} ({where})", bytes);
    }

    private static (Exception? Error, long Allocated, bool Damaged) Run(string path, bool salvage)
    {
        var before = GC.GetAllocatedBytesForCurrentThread();
        try
        {
            using var reader = EtlFileReader.Open(path, new TraceReadOptions { Salvage = salvage });
            var session = new AnalysisSession(FuzzRead.AllAnalyses);
            reader.Read(session);
            session.Complete();
            return (null, GC.GetAllocatedBytesForCurrentThread() - before, reader.Info.Damage is not null);
        }
        catch (Exception e)
        {
            return (e, GC.GetAllocatedBytesForCurrentThread() - before, false);
        }
    }
}
