using TraceLab.Capture.Windows;
using TraceLab.Core;
using TraceLab.Formats.PerfData;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Cli;

/// <summary>Opens a trace file with the reader its first bytes call for.</summary>
public static class TraceFiles
{
    private static readonly byte[] TraceDatMagic = [0x17, 0x08, 0x44, (byte)'t', (byte)'r', (byte)'a', (byte)'c', (byte)'i', (byte)'n', (byte)'g'];

    /// <param name="salvage">For trace.dat: read each CPU up to its first damage instead of failing (see <see cref="TraceDatReadOptions.Salvage"/>).</param>
    public static IKernelTraceReader Open(string path, bool salvage = false)
    {
        if (!File.Exists(path)) throw new UsageException($"{path}: no such file");
        // ETW logs have no magic number of their own (they start with a buffer header); the extension names them.
        if (path.EndsWith(".etl", StringComparison.OrdinalIgnoreCase)) return EtlTraceReader.Open(path);
        Span<byte> head = stackalloc byte[16];
        int n;
        using (var f = File.OpenRead(path)) n = f.ReadAtLeast(head, head.Length, throwOnEndOfStream: false);
        if (n >= TraceDatMagic.Length && head[..TraceDatMagic.Length].SequenceEqual(TraceDatMagic))
            return TraceDatReader.Open(path, new TraceDatReadOptions { Salvage = salvage });
        if (n >= 8 && head[..8].SequenceEqual("PERFILE2"u8))
            return PerfDataReader.Open(path, new TraceDatReadOptions { Salvage = salvage });
        throw new TraceFormatException(path, 0, "a trace-cmd trace.dat (magic 17 08 44 'tracing'), a perf.data (magic PERFILE2) or an ETW .etl file");
    }
}
