using System.Buffers.Binary;
using System.Text;
using TraceLab.Core;
using TraceLab.Formats.Symbols;
using TraceLab.Formats.Symbols.Unwind;

namespace TraceLab.Formats.PerfData;

/// <summary>
/// The call stacks and module maps of a perf.data recorded with callchains (perf record -g): each sample's
/// PERF_SAMPLE_CALLCHAIN becomes a stack id in <see cref="Table"/>, and the MMAP / MMAP2 records (with or without
/// build-ids), COMM records of an exec and FORK records of a new process build <see cref="Maps"/>. Interning happens
/// at delivery, once per sample, without allocation for a stack seen before.
/// </summary>
internal sealed class PerfStacks
{
    /// <summary>perf walks at most perf_event_max_stack (127 by default) frames; room for a raised limit.</summary>
    public const int MaxFrames = 1024;

    /// <summary>User frames unwound at most: perf's own limit (perf_event_max_stack, 127 by default).</summary>
    public const int MaxUnwound = 127;

    /// <summary>Entries at or above this are context markers (PERF_CONTEXT_*), not addresses.</summary>
    private const ulong ContextMax = unchecked((ulong)-4095);
    private const ulong ContextKernel = unchecked((ulong)-128);
    private const ulong ContextUser = unchecked((ulong)-512);

    /// <summary>PERF_RECORD_MISC_MMAP_DATA: a mapping that is not executable.</summary>
    private const ushort MiscMmapData = 1 << 13;
    /// <summary>PERF_RECORD_MISC_MMAP_BUILD_ID: MMAP2 carries the build-id instead of device and inode.</summary>
    private const ushort MiscMmapBuildId = 1 << 14;
    /// <summary>PERF_RECORD_MISC_COMM_EXEC: the COMM record is an exec.</summary>
    private const ushort MiscCommExec = 1 << 13;
    /// <summary>PROT_EXEC in MMAP2's prot.</summary>
    private const uint ProtExec = 4;

    private readonly ulong[] _frames = new ulong[MaxFrames];
    private readonly SampleIdTrailer _trailer;
    /// <summary>
    /// Exec times per process: a stack after one is a stack of another program. By time, not by count: the scan
    /// reads an exec before samples older than it are delivered.
    /// </summary>
    private readonly Dictionary<int, List<long>> _execs = new();

    private int Generation(int pid, long time)
    {
        if (!_execs.TryGetValue(pid, out var times)) return 0;
        var n = 0;
        foreach (var t in times)
            if (t <= time) n++;
        return n;
    }

    /// <param name="trailer">The sample id trailer of non-sample records.</param>
    /// <param name="recordedBuildIds">The build-ids perf recorded, by path (a changed binary's CFI is not
    /// used).</param>
    public PerfStacks(SampleIdTrailer trailer, IReadOnlyDictionary<string, byte[]>? recordedBuildIds = null)
    {
        _trailer = trailer;
        _modules = new UnwindModules(Maps, new ModuleFiles(recordedBuildIds, new SymbolOptions(), (_, _) => { },
            debugSymbols: false));
    }

    private readonly UserStackUnwinder _unwinder = new();
    private readonly UnwindModules _modules;
    private readonly ulong[] _registers = new ulong[CallFrameInfo.Registers];

    public StackTable Table { get; } = new();
    public ProcessMaps Maps { get; } = new();

    /// <summary>Frames in guest or hypervisor context, left out of the stacks (no module map names them).</summary>
    public long OtherContextFrames { get; private set; }

    /// <summary>Mapping records that could not be read (too short, a name without its end).</summary>
    public long BadMappings { get; private set; }

    /// <summary>The stack id of a sample body (0: none), interned in <see cref="Table"/>.</summary>
    public int Intern(SampleFormat samples, ReadOnlySpan<byte> body, long time)
    {
        if (!samples.TryCallchain(body, out var entries, out var pid, out _, out var truncated)) return 0;
        if (truncated) Table.Truncated++;
        var n = 0;
        var kernel = 0;
        var context = ContextKernel;
        var sawUser = false;
        for (var i = 0; i + 8 <= entries.Length && n < _frames.Length; i += 8)
        {
            var ip = BinaryPrimitives.ReadUInt64LittleEndian(entries[i..]);
            if (ip >= ContextMax)
            {
                context = ip;
                if (ip == ContextUser) sawUser = true;
                continue;
            }

            if (context != ContextKernel && context != ContextUser)
            {
                OtherContextFrames++;
                continue;
            }

            // Kernel frames come first; one after the user part (a damaged chain) counts as a user frame.
            if (context == ContextKernel && !sawUser && kernel == n) kernel++;
            _frames[n++] = ip;
        }

        // --call-graph dwarf: the callchain holds the kernel part only; the user part is unwound from the copy.
        if (!sawUser && n < _frames.Length
            && samples.TryUserStack(body, out var registers, out var stack, out var mask))
            n += UnwindUser(pid, time, registers, stack, mask, _frames.AsSpan(n, Math.Min(MaxUnwound, MaxFrames - n)));

        return Table.Intern(pid, time, _frames.AsSpan(0, n), kernel, _execs.Count == 0 ? 0 : Generation(pid, time));
    }

    /// <summary>perf_regs.h x86 register order → DWARF numbers (-1: not used to unwind).</summary>
    private static ReadOnlySpan<sbyte> PerfToDwarf =>
        [0, 3, 2, 1, 4, 5, 6, 7, 16, -1, -1, -1, -1, -1, -1, -1, 8, 9, 10, 11, 12, 13, 14, 15];

    private int UnwindUser(int pid, long time, ReadOnlySpan<byte> registers, ReadOnlySpan<byte> stack, ulong mask,
        Span<ulong> frames)
    {
        var context = new UserContext { Registers = _registers, Stack = stack };
        var k = 0;
        for (var bit = 0; bit < 64 && k + 8 <= registers.Length; bit++)
        {
            if ((mask & (1UL << bit)) == 0) continue;
            var value = BinaryPrimitives.ReadUInt64LittleEndian(registers[k..]);
            k += 8;
            if (bit >= PerfToDwarf.Length || PerfToDwarf[bit] < 0) continue;
            _registers[PerfToDwarf[bit]] = value;
            context.Known |= 1u << PerfToDwarf[bit];
        }

        if ((context.Known & (1u << UserStackUnwinder.Sp)) == 0) return 0;
        context.StackStart = _registers[UserStackUnwinder.Sp];
        _modules.At(pid, time);
        var n = _unwinder.Unwind(ref context, _modules, frames);
        Table.Unwound++;
        if (_unwinder.LastEnd is not (UnwindEnd.Complete or UnwindEnd.Limit)) Table.UnwoundShort++;
        return n;
    }

    /// <summary>The modules of one process at one time, as the unwinder asks for them.</summary>
    private sealed class UnwindModules(ProcessMaps maps, ModuleFiles files) : IUnwindModules
    {
        private int _pid;
        private long _time;

        public void At(int pid, long time) => (_pid, _time) = (pid, time);

        public CallFrameInfo? Find(ulong address, out ulong linkAddress)
        {
            linkAddress = 0;
            if (maps.Find(_pid, address, _time) is not { } mapping || files.File(mapping) is not { } elf
                || elf.CallFrames is not { } cfi
                || elf.AddressOfFileOffset(address - mapping.Start + mapping.FileOffset) is not { } link) return null;
            linkAddress = link;
            return cfi;
        }
    }

    /// <summary>
    /// PERF_RECORD_MMAP (u32 pid, tid; u64 addr, len, pgoff; filename) or PERF_RECORD_MMAP2 (the same, then either
    /// u32 maj, min; u64 ino, ino_generation or u8 build_id_size, 3 reserved, build_id[20]; then u32 prot, flags;
    /// filename), followed by the sample id trailer.
    /// </summary>
    public void Mapping(uint type, ushort misc, ReadOnlySpan<byte> body)
    {
        var fixedBytes = type == PerfRecordType.Mmap2 ? 64 : 32;
        var trailer = Math.Min(_trailer.Size, Math.Max(0, body.Length - fixedBytes));
        if (body.Length < fixedBytes + 1)
        {
            BadMappings++;
            return;
        }

        var pid = (int)BinaryPrimitives.ReadUInt32LittleEndian(body);
        var start = BinaryPrimitives.ReadUInt64LittleEndian(body[8..]);
        var length = BinaryPrimitives.ReadUInt64LittleEndian(body[16..]);
        var pgoff = BinaryPrimitives.ReadUInt64LittleEndian(body[24..]);
        byte[]? buildId = null;
        var executable = (misc & MiscMmapData) == 0;
        if (type == PerfRecordType.Mmap2)
        {
            if ((misc & MiscMmapBuildId) != 0)
            {
                var size = Math.Min((int)body[32], 20);
                if (size > 0) buildId = body.Slice(36, size).ToArray();
            }

            executable = (BinaryPrimitives.ReadUInt32LittleEndian(body[56..]) & ProtExec) != 0;
        }

        var name = body[fixedBytes..^trailer];
        var nul = name.IndexOf((byte)0);
        if (nul < 0 || length == 0 || start + length < start)
        {
            BadMappings++;
            return;
        }

        var time = Math.Max(0, _trailer.Time(body));
        Maps.Add(pid, new ModuleMapping(start, length, pgoff, Encoding.UTF8.GetString(name[..nul]), buildId,
            executable, time));
    }

    /// <summary>PERF_RECORD_COMM with PERF_RECORD_MISC_COMM_EXEC: the process's old mappings end.</summary>
    public void Comm(ushort misc, ReadOnlySpan<byte> body)
    {
        if ((misc & MiscCommExec) == 0 || body.Length < 8) return;
        var pid = (int)BinaryPrimitives.ReadUInt32LittleEndian(body);
        Maps.Exec(pid, Math.Max(0, _trailer.Time(body)));
        if (!_execs.TryGetValue(pid, out var times)) _execs[pid] = times = [];
        times.Add(Math.Max(0, _trailer.Time(body)));
    }

    /// <summary>
    /// PERF_RECORD_FORK (u32 pid, ppid, tid, ptid, u64 time): a new process inherits its parent's maps.
    /// </summary>
    public void Fork(ReadOnlySpan<byte> body)
    {
        if (body.Length < 24) return;
        var pid = (int)BinaryPrimitives.ReadUInt32LittleEndian(body);
        var ppid = (int)BinaryPrimitives.ReadUInt32LittleEndian(body[4..]);
        var tid = (int)BinaryPrimitives.ReadUInt32LittleEndian(body[8..]);
        // A new thread (tid ≠ pid) shares its process's maps; only a new process copies them.
        if (pid != tid || pid == ppid) return;
        Maps.Fork(ppid, pid, (long)Math.Min(BinaryPrimitives.ReadUInt64LittleEndian(body[16..]), long.MaxValue));
    }
}
