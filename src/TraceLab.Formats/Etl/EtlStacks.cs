using System.Buffers.Binary;
using System.Text;
using TraceLab.Core;
using TraceLab.Formats.Etw;

namespace TraceLab.Formats.Etl;

/// <summary>
/// The call stacks of a kernel trace recorded with stack walking (<c>xperf -stackwalk CSwitch+ReadyThread</c>,
/// WPR's profiles): each StackWalk event (opcode 32: <c>u64 EventTimeStamp; u32 StackProcess; u32 StackThread;
/// ptr Stack[]</c>) follows, in its CPU's buffers, the event it belongs to, with that event's raw timestamp; its
/// frames are interned once per distinct stack, kernel frames (addresses in the upper half) first. Image load,
/// rundown and unload events (<c>ptr ImageBase; ptr ImageSize; u32 ProcessId; …; FileName</c>) build the processes'
/// module maps, so frames are named module+offset (PDB symbols are not read).
/// </summary>
internal sealed class EtlStacks
{
    /// <summary>ETW stack walks hold at most 192 frames.</summary>
    private const int MaxFrames = 192;
    private const ulong KernelStart = 0xffff_8000_0000_0000;

    private readonly ulong[] _frames = new ulong[MaxFrames];

    public StackTable Table { get; } = new();
    public ProcessMaps Maps { get; } = new();

    /// <summary>StackWalk events that followed no event of theirs (another timestamp, no delivered event).</summary>
    public long Orphans { get; private set; }

    /// <summary>Image events too short for their layout.</summary>
    public long BadImages { get; private set; }

    public static bool IsStackWalk(in EtlEventRecord r) =>
        r.Opcode == EtwKernelEvents.StackWalkStack && EtlEventDispatcher.GuidOf(r) == EtwKernelEvents.StackWalkGuid;

    public static bool IsImage(in EtlEventRecord r) =>
        r.Opcode is EtwKernelEvents.ImageLoad or EtwKernelEvents.ImageDCStart or EtwKernelEvents.ImageUnload
            or EtwKernelEvents.ImageDCEnd
        && EtlEventDispatcher.GuidOf(r) == EtwKernelEvents.ImageGuid;

    /// <summary>
    /// The stack id of a StackWalk payload for the event logged at raw time <paramref name="eventRaw"/> (0: none,
    /// another event's); <paramref name="thread"/> is whose stack it is.
    /// </summary>
    public int Intern(ReadOnlySpan<byte> payload, int pointerSize, long eventRaw, long time, out int thread)
    {
        thread = 0;
        if (payload.Length < 16 || (pointerSize != 4 && pointerSize != 8)) return 0;
        var raw = BinaryPrimitives.ReadInt64LittleEndian(payload);
        if (raw != eventRaw) return 0;
        var process = (int)BinaryPrimitives.ReadUInt32LittleEndian(payload[8..]);
        thread = (int)BinaryPrimitives.ReadUInt32LittleEndian(payload[12..]);
        var n = Math.Min((payload.Length - 16) / pointerSize, MaxFrames);
        var kernel = 0;
        for (var i = 0; i < n; i++)
        {
            var ip = Pointer(payload, 16 + i * pointerSize, pointerSize);
            _frames[i] = ip;
            if (kernel == i && ip >= KernelStart) kernel++;
        }

        return Table.Intern(process, time, _frames.AsSpan(0, n), kernel, 0);
    }

    private static ulong Pointer(ReadOnlySpan<byte> payload, int at, int size) => size == 8
        ? BinaryPrimitives.ReadUInt64LittleEndian(payload[at..])
        : BinaryPrimitives.ReadUInt32LittleEndian(payload[at..]);

    /// <summary>A StackWalk event that found no event of its own.</summary>
    public void Orphan() => Orphans++;

    /// <summary>An Image event: a module mapped in a process (pid 0: the kernel's) from its load or rundown.</summary>
    public void Image(in EtlEventRecord r, ReadOnlySpan<byte> payload, long time)
    {
        var p = r.PointerSize;
        // ImageBase, ImageSize, ProcessId, ImageCheckSum, TimeDateStamp, Reserved0, DefaultBase, Reserved1..4.
        var nameAt = 2 * p + 16 + p + 16;
        if (payload.Length < nameAt || (p != 4 && p != 8))
        {
            BadImages++;
            return;
        }

        var start = Pointer(payload, 0, p);
        var size = Pointer(payload, p, p);
        var process = (int)BinaryPrimitives.ReadUInt32LittleEndian(payload[(2 * p)..]);
        if (r.Opcode is EtwKernelEvents.ImageUnload or EtwKernelEvents.ImageDCEnd || size == 0 || start + size < start)
            return;
        var name = payload[nameAt..];
        var end = 0;
        while (end + 1 < name.Length && (name[end] != 0 || name[end + 1] != 0)) end += 2;
        var path = Encoding.Unicode.GetString(name[..end]);
        Maps.Add(process == 0 ? ProcessMaps.Kernel : process,
            new ModuleMapping(start, size, 0, path, null, true, time));
    }
}
