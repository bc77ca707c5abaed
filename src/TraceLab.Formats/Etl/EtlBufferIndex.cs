using System.Globalization;
using Microsoft.Win32.SafeHandles;
using TraceLab.Core;

namespace TraceLab.Formats.Etl;

/// <summary>One buffer record of the file: where it starts and what its header says.</summary>
public readonly record struct EtlBufferEntry(long FileOffset, EtlBufferHeader Header);

/// <summary>
/// Walks the chain of buffer records (each header's BufferSize leads to the next) reading only their 0x48-byte
/// headers, checks each, and groups them per CPU in SequenceNumber order: the order the CPU filled them, which the
/// file order is not. The index costs about 40 bytes per buffer (a 1 GiB file of 64 KiB buffers: 640 KiB).
/// </summary>
public sealed class EtlBufferIndex
{
    /// <summary>Largest buffer accepted: ETW's own maximum is 1 MiB for most sessions, 16 MiB with layout
    /// 2.0.</summary>
    public const int MaxBufferSize = 16 << 20;
    /// <summary>CPU numbers a buffer may name (the processor index is 11 bits).</summary>
    public const int MaxCpus = 2048;

    private EtlBufferIndex(IReadOnlyList<EtlBufferEntry[]> perCpu, long buffers, string? damage, long skippedBytes,
        int damagedCpu)
    {
        PerCpu = perCpu;
        Buffers = buffers;
        Damage = damage;
        SkippedBytes = skippedBytes;
        DamagedCpu = damagedCpu;
    }

    /// <summary>Buffers of each CPU (index = CPU number; empty arrays for CPUs without buffers), in fill
    /// order.</summary>
    public IReadOnlyList<EtlBufferEntry[]> PerCpu { get; }
    public long Buffers { get; }
    /// <summary>Why the chain stopped early (salvage only), or null.</summary>
    public string? Damage { get; }
    public long SkippedBytes { get; }
    /// <summary>The CPU the skipped bytes are charged to (the last buffer's before the damage), or 0.</summary>
    public int DamagedCpu { get; }

    /// <param name="maxEventBytes">Largest decompressed size a compressed buffer may claim (the session's buffer
    /// size).</param>
    public static EtlBufferIndex Build(SafeFileHandle file, string path, int maxEventBytes, bool salvage)
    {
        var length = RandomAccess.GetLength(file);
        var groups = new Dictionary<int, List<EtlBufferEntry>>();
        Span<byte> raw = stackalloc byte[EtlBufferHeader.Size];
        long at = 0, count = 0;
        string? damage = null;
        var lastCpu = 0;
        while (at < length)
        {
            var problem = length - at < EtlBufferHeader.Size
                ? $"a {EtlBufferHeader.Size}-byte buffer header (the file ends {length - at} bytes into it)"
                : null;
            EtlBufferHeader h = default;
            if (problem is null)
            {
                EtlFileIo.ReadExactly(file, raw, at);
                h = EtlBufferHeader.Read(raw);
                problem = Check(h, length - at, maxEventBytes);
            }

            if (problem is not null)
            {
                if (!salvage) throw new TraceFormatException(path, at, problem);
                damage = string.Create(CultureInfo.InvariantCulture,
                    $"salvaged a damaged .etl: the buffer chain breaks at offset {at} (expected {problem}); "
                    + $"{length - at:N0} bytes after it skipped, the events in them are missing");
                break;
            }

            if (!groups.TryGetValue(h.Processor, out var list)) groups[h.Processor] = list = [];
            list.Add(new EtlBufferEntry(at, h));
            lastCpu = h.Processor;
            at += h.BufferSize;
            count++;
        }

        var cpus = groups.Count == 0 ? 0 : groups.Keys.Max() + 1;
        var perCpu = new EtlBufferEntry[cpus][];
        for (var cpu = 0; cpu < cpus; cpu++)
        {
            var list = groups.GetValueOrDefault(cpu);
            var sorted = list?.ToArray() ?? [];
            // Ties (a damaged sequence number) keep file order, so the result does not depend on the sort.
            Array.Sort(sorted, static (a, b) => a.Header.SequenceNumber != b.Header.SequenceNumber
                ? a.Header.SequenceNumber.CompareTo(b.Header.SequenceNumber)
                : a.FileOffset.CompareTo(b.FileOffset));
            perCpu[cpu] = sorted;
        }

        return new EtlBufferIndex(perCpu, count, damage, damage is null ? 0 : length - at, lastCpu);
    }

    private static string? Check(in EtlBufferHeader h, long remaining, int maxEventBytes)
    {
        if (h.BufferSize < EtlBufferHeader.Size || h.BufferSize > MaxBufferSize)
            return $"a buffer size between {EtlBufferHeader.Size} and {MaxBufferSize} bytes, found {h.BufferSize}";
        if (h.BufferSize > remaining)
            return $"a {h.BufferSize}-byte buffer (the file ends {remaining} bytes into it)";
        if (h.Offset < EtlBufferHeader.Size)
            return $"a filled size of at least {EtlBufferHeader.Size} bytes, found {h.Offset}";
        if (h.IsCompressed ? h.EventBytes > maxEventBytes : h.Offset > h.BufferSize)
        {
            return h.IsCompressed
                ? $"a compressed buffer of at most {maxEventBytes} bytes of events, found {h.EventBytes}"
                : $"a filled size within the {h.BufferSize}-byte buffer, found {h.Offset}";
        }

        return h.Processor >= MaxCpus ? $"a processor number below {MaxCpus}, found {h.Processor}" : null;
    }
}
