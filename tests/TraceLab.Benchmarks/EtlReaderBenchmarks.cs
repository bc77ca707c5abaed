using System.Buffers.Binary;
using BenchmarkDotNet.Attributes;
using TraceLab.Formats.Etl;

namespace TraceLab.Benchmarks;

/// <summary>
/// The managed .etl reader (buffer walk, per-CPU k-way merge, header parse, CSwitch mapping) on a generated
/// 4-CPU file of 2 M CSwitch events in 64 KiB buffers (the densest case: 40-byte records), and on a real file given by
/// TRACELAB_BENCH_ETL (e.g. an extracted external .etl file, docs/testing.md#external-traces). Events per second =
/// events / median. dotnet run -c Release --project tests/TraceLab.Benchmarks -- --filter '*EtlReader*'
/// </summary>
[MemoryDiagnoser]
public class EtlReaderBenchmarks
{
    private const int Events = 2_000_000;
    private const int Cpus = 4;
    private const int BufferSize = 65536;
    private string _generated = "";

    [GlobalSetup]
    public void Setup()
    {
        _generated = Path.Combine(Path.GetTempPath(), $"tracelab-bench-{Environment.ProcessId}.etl");
        File.WriteAllBytes(_generated, CSwitchFile());
    }

    [GlobalCleanup]
    public void Cleanup() => File.Delete(_generated);

    [Benchmark(Description = "read .etl (2 M CSwitch, 4 CPUs)")]
    public long ReadGenerated() => Read(_generated);

    [Benchmark(Description = "read .etl (TRACELAB_BENCH_ETL)")]
    public long ReadReal() =>
        Environment.GetEnvironmentVariable("TRACELAB_BENCH_ETL") is { Length: > 0 } path ? Read(path) : 0;

    private static long Read(string path)
    {
        using var reader = EtlFileReader.Open(path);
        var sink = new CountingSink();
        reader.Read(sink);
        return sink.Count;
    }

    /// <summary>A header buffer, then per-CPU buffers of PERFINFO CSwitch records (v2, 24-byte payload).</summary>
    private static byte[] CSwitchFile()
    {
        const int record = 40;
        var perBuffer = (BufferSize - 0x48) / record;
        var perCpu = Events / Cpus;
        var buffers = (perCpu + perBuffer - 1) / perBuffer * Cpus;
        var file = new byte[(long)(buffers + 1) * BufferSize];
        file.AsSpan().Fill(0xFF);
        WriteHeaderBuffer(file.AsSpan(0, BufferSize));
        var at = BufferSize;
        long seq = 1;
        var current = new int[Cpus];
        for (var start = 0; start < perCpu; start += perBuffer)
        {
            for (var cpu = 0; cpu < Cpus; cpu++, at += BufferSize)
            {
                var b = file.AsSpan(at, BufferSize);
                b[..0x48].Clear();
                var n = Math.Min(perBuffer, perCpu - start);
                for (var k = 0; k < n; k++)
                {
                    var e = b.Slice(0x48 + k * record, record);
                    e.Clear();
                    BinaryPrimitives.WriteUInt32LittleEndian(e, 0xC0110002);
                    BinaryPrimitives.WriteUInt16LittleEndian(e[4..], record);
                    BinaryPrimitives.WriteUInt16LittleEndian(e[6..], 0x0524);
                    BinaryPrimitives.WriteInt64LittleEndian(e[8..], 1000 + (start + k) * 10L + cpu);
                    var next = 1000 + (start + k) % 50;
                    BinaryPrimitives.WriteInt32LittleEndian(e[16..], next);
                    BinaryPrimitives.WriteInt32LittleEndian(e[20..], current[cpu]);
                    e[24] = 9; e[25] = 8; e[28] = 6; e[29] = 1; e[30] = 5;
                    current[cpu] = next;
                }

                BinaryPrimitives.WriteInt32LittleEndian(b, BufferSize);
                BinaryPrimitives.WriteInt64LittleEndian(b[0x18..], seq++);
                BinaryPrimitives.WriteUInt16LittleEndian(b[0x28..], (ushort)cpu);
                BinaryPrimitives.WriteInt32LittleEndian(b[0x30..], 0x48 + n * record);
                BinaryPrimitives.WriteUInt16LittleEndian(b[0x34..], 0x20);
            }
        }

        return file;
    }

    private static void WriteHeaderBuffer(Span<byte> b)
    {
        b[..0x48].Clear();
        var e = b[0x48..];
        e[..(0x20 + 0x118)].Clear();
        BinaryPrimitives.WriteUInt32LittleEndian(e, 0xC0020002);
        BinaryPrimitives.WriteUInt16LittleEndian(e[4..], 0x20 + 0x118);
        BinaryPrimitives.WriteInt64LittleEndian(e[16..], 1000);
        var p = e[0x20..];
        BinaryPrimitives.WriteInt32LittleEndian(p, BufferSize);
        BinaryPrimitives.WriteUInt32LittleEndian(p[4..], 0x0501000A);
        BinaryPrimitives.WriteInt32LittleEndian(p[8..], 19041);
        BinaryPrimitives.WriteInt32LittleEndian(p[12..], Cpus);
        BinaryPrimitives.WriteInt32LittleEndian(p[0x2C..], 8);
        BinaryPrimitives.WriteInt64LittleEndian(p[0x100..], 10_000_000);
        BinaryPrimitives.WriteInt32LittleEndian(p[0x110..], 1);
        BinaryPrimitives.WriteInt32LittleEndian(b, BufferSize);
        BinaryPrimitives.WriteInt32LittleEndian(b[0x30..], 0x48 + 0x20 + 0x118);
        BinaryPrimitives.WriteUInt16LittleEndian(b[0x34..], 0x21);
        BinaryPrimitives.WriteUInt16LittleEndian(b[0x36..], 4);
    }
}
