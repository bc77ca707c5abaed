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
/// module maps, so frames are named module+offset (PDB symbols are not read). A trace recorded with stack caching
/// (xperf -stackcompression, WPR) references the cached kernel and user parts of an event's stack by key instead
/// (StackKeyKernel 37, StackKeyUser 38, after the event like a StackWalk), and gives each key's frames when the key
/// leaves the cache (KeyDelete 35) or at the session's end (KeyRundown 36): such a stack gets its id at the event
/// and its frames when the read ends. A key deleted and used again names other frames: references count per
/// generation of their key.
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

    /// <summary>Stacks with a cached part whose key was never defined (that part's frames are missing).</summary>
    public long UndefinedKeys { get; private set; }

    /// <summary>Per key, how many times it left the cache so far (its generation).</summary>
    private readonly Dictionary<ulong, int> _keyGeneration = new();
    /// <summary>The frames of each referenced key generation; null until its definition is read.</summary>
    private readonly Dictionary<(ulong Key, int Generation), ulong[]?> _keyFrames = new();
    /// <summary>Each combination of parts seen, and the stack id reserved for it.</summary>
    private readonly Dictionary<KeyedStack, int> _keyed = new();

    /// <summary>An event's stack made of cached parts (a key per part, with the key's generation) and walked ones.
    /// </summary>
    private readonly record struct KeyedStack(int Process, int Walked, ulong KernelKey, int KernelGeneration,
        bool HasKernelKey, ulong UserKey, int UserGeneration, bool HasUserKey);

    public static bool IsStackWalk(in EtlEventRecord r) =>
        r.Opcode == EtwKernelEvents.StackWalkStack && EtlEventDispatcher.GuidOf(r) == EtwKernelEvents.StackWalkGuid;

    /// <summary>A StackKeyKernel or StackKeyUser reference.</summary>
    public static bool IsKeyReference(in EtlEventRecord r) =>
        r.Opcode is EtwKernelEvents.StackWalkKeyKernel or EtwKernelEvents.StackWalkKeyUser
        && EtlEventDispatcher.GuidOf(r) == EtwKernelEvents.StackWalkGuid;

    /// <summary>Any record of the StackWalk class: none is an event of its own.</summary>
    public static bool IsStackRecord(in EtlEventRecord r) =>
        EtlEventDispatcher.GuidOf(r) == EtwKernelEvents.StackWalkGuid;

    /// <summary>
    /// A key reference's key, process and thread, when it is for the event logged at raw time
    /// <paramref name="eventRaw"/>; false for another event's (or a payload too short).
    /// </summary>
    public static bool Reference(ReadOnlySpan<byte> payload, int pointerSize, long eventRaw, out int process,
        out int thread, out ulong key)
    {
        process = thread = 0;
        key = 0;
        if ((pointerSize != 4 && pointerSize != 8) || payload.Length < 16 + pointerSize
            || BinaryPrimitives.ReadInt64LittleEndian(payload) != eventRaw) return false;
        process = (int)BinaryPrimitives.ReadUInt32LittleEndian(payload[8..]);
        thread = (int)BinaryPrimitives.ReadUInt32LittleEndian(payload[12..]);
        key = Pointer(payload, 16, pointerSize);
        return true;
    }

    /// <summary>
    /// The stack id of an event whose stack has cached parts (<paramref name="kernelKey"/>,
    /// <paramref name="userKey"/>; null: that part is the walked stack's <paramref name="walked"/>, or none): reserved
    /// at its first event, its frames given at the end of the read (<see cref="ResolveKeys"/>).
    /// </summary>
    public int Keyed(int process, long time, int walked, ulong? kernelKey, ulong? userKey)
    {
        var stack = new KeyedStack(process, walked, kernelKey ?? 0, Generation(kernelKey), kernelKey.HasValue,
            userKey ?? 0, Generation(userKey), userKey.HasValue);
        // The event is counted once: with its walked part when it has one (interned already).
        if (walked == 0) Table.Offered();
        if (_keyed.TryGetValue(stack, out var id)) return id;
        id = Table.Reserve(process, time);
        _keyed[stack] = id;
        if (stack.HasKernelKey) _keyFrames.TryAdd((stack.KernelKey, stack.KernelGeneration), null);
        if (stack.HasUserKey) _keyFrames.TryAdd((stack.UserKey, stack.UserGeneration), null);
        return id;
    }

    private int Generation(ulong? key) => key is { } k ? _keyGeneration.GetValueOrDefault(k) : 0;

    /// <summary>
    /// A KeyDelete or KeyRundown record: the frames of its key's current generation (kept when referenced); a
    /// delete starts the key's next generation.
    /// </summary>
    public void Define(in EtlEventRecord r, ReadOnlySpan<byte> payload)
    {
        var p = r.PointerSize;
        if ((p != 4 && p != 8) || payload.Length < p) return;
        var key = Pointer(payload, 0, p);
        var generation = _keyGeneration.GetValueOrDefault(key);
        if (_keyFrames.ContainsKey((key, generation)))
        {
            var n = Math.Min((payload.Length - p) / p, MaxFrames);
            var frames = new ulong[n];
            for (var i = 0; i < n; i++) frames[i] = Pointer(payload, p + i * p, p);
            _keyFrames[(key, generation)] = frames;
        }

        if (r.Opcode == EtwKernelEvents.StackWalkKeyDelete) _keyGeneration[key] = generation + 1;
    }

    /// <summary>
    /// Gives every stack with cached parts its frames: the kernel part (its key's frames, else the walked stack's
    /// kernel frames), then the user part; a key never defined leaves its part out and is counted.
    /// </summary>
    public void ResolveKeys()
    {
        var frames = new List<ulong>(2 * MaxFrames);
        foreach (var (stack, id) in _keyed)
        {
            frames.Clear();
            ReadOnlySpan<ulong> walked = stack.Walked == 0 ? [] : Table.Frames(stack.Walked);
            var walkedKernel = stack.Walked == 0 ? 0 : Table.KernelFrames(stack.Walked);
            var undefined = false;
            if (stack.HasKernelKey)
            {
                if (_keyFrames.GetValueOrDefault((stack.KernelKey, stack.KernelGeneration)) is { } k)
                    frames.AddRange(k);
                else undefined = true;
            }
            else frames.AddRange(walked[..walkedKernel]);

            var kernel = frames.Count;
            if (stack.HasUserKey)
            {
                if (_keyFrames.GetValueOrDefault((stack.UserKey, stack.UserGeneration)) is { } u) frames.AddRange(u);
                else undefined = true;
            }
            else frames.AddRange(walked[walkedKernel..]);

            if (undefined) UndefinedKeys++;
            Table.Define(id, System.Runtime.InteropServices.CollectionsMarshal.AsSpan(frames), kernel);
        }

        _keyed.Clear();
        _keyFrames.Clear();
    }

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
