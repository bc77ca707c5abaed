using System.Buffers.Binary;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text;
using TraceLab.Core;

namespace TraceLab.Formats.Ftrace;

/// <summary>
/// Turns raw ftrace event payloads into <see cref="KernelEvent"/>s. Field positions are looked up by name in the
/// formats the trace carries, so kernels with different layouts decode correctly; per event only array indexing and
/// scalar reads happen (marker and exec texts excepted).
/// </summary>
public sealed class KernelEventDecoder
{
    private enum DecodeKind : byte
    {
        Other,
        Switch,
        Waking,
        WakeupNew,
        Migrate,
        Fork,
        Exec,
        Exit,
        SyscallEnter,
        SyscallExit,
        Print,
    }

    private struct Entry
    {
        public DecodeKind Kind;
        public bool Known;
        public int MinLength;
        public FieldReader A, B, C, D, E;
        public TextRef Comm1, Comm2, Text;
    }

    /// <summary>
    /// Where a string field lives: a fixed char array (Size &gt; 0), a flexible array to the end of the record
    /// (Size 0), or a __data_loc/__rel_loc word pointing at it.
    /// </summary>
    private struct TextRef
    {
        public bool Present, DataLoc, RelLoc;
        /// <summary>A fixed 16-byte char array (TASK_COMM_LEN), what the comm cache keys on.</summary>
        public bool Fixed16;
        public int Offset, Size;

        public readonly int MinLength => !Present ? 0 : DataLoc ? Offset + 4 : Offset + Size;

        public readonly ReadOnlySpan<byte> Resolve(ReadOnlySpan<byte> payload)
        {
            if (!Present) return default;
            ReadOnlySpan<byte> text;
            if (DataLoc)
            {
                if (Offset + 4 > payload.Length) return default;
                var loc = BinaryPrimitives.ReadUInt32LittleEndian(payload[Offset..]);
                var start = (int)(loc & 0xFFFF) + (RelLoc ? Offset + 4 : 0);
                var len = (int)(loc >> 16);
                if (start > payload.Length || len > payload.Length - start) return default;
                text = payload.Slice(start, len);
            }
            else if (Size > 0)
            {
                if (Offset + Size > payload.Length) return default;
                text = payload.Slice(Offset, Size);
            }
            else
            {
                if (Offset > payload.Length) return default;
                text = payload[Offset..];
            }

            var nul = text.IndexOf((byte)0);
            return nul >= 0 ? text[..nul] : text;
        }
    }

    private readonly Entry[] _entries;
    private readonly FieldReader _commonType;
    private readonly FieldReader _commonPid;
    private readonly FieldReader _commonFlags;
    /// <summary>A payload shorter than this cannot hold common_pid and common_type.</summary>
    private readonly int _commonEnd;
    private readonly ThreadTable _threads;
    private readonly StringInterner _markers = new();

    public KernelEventDecoder(IEnumerable<FtraceEventFormat> formats, ThreadTable threads)
    {
        _threads = threads;
        var list = formats.ToList();
        var maxId = 0;
        foreach (var f in list)
        {
            if (f.Id < 0 || f.Id > ushort.MaxValue)
                throw new TraceFormatException($"event format {f.System}/{f.Name}: ID {f.Id} is outside 0..65535");
            maxId = Math.Max(maxId, f.Id);
        }

        _entries = new Entry[maxId + 1];
        var hasWaking = list.Exists(f => f.System == "sched" && f.Name == "sched_waking");
        foreach (var f in list)
        {
            if (_commonType.IsPresent is false && f.Field("common_type") is { } ct)
            {
                _commonType = FieldReader.From(ct);
                _commonPid = FieldReader.From(f.Field("common_pid"));
                _commonFlags = FieldReader.From(f.Field("common_flags"));
            }

            _entries[f.Id] = Build(f, hasWaking);
        }

        if (!_commonType.IsPresent) _commonType = new FieldReader(0, 2, false);
        if (!_commonPid.IsPresent) _commonPid = new FieldReader(4, 4, true);
        if (!_commonFlags.IsPresent) _commonFlags = new FieldReader(2, 1, false);
        _commonEnd = Math.Max(_commonPid.End, _commonType.End);
        _quick = BuildQuick(_entries);
    }

    /// <summary>Events whose type id has no format; they are passed on as <see cref="KernelEventKind.Other"/>.</summary>
    public long UnknownEventCount { get; private set; }

    /// <summary>Distinct marker texts interned so far.</summary>
    public int InternedMarkerCount => _markers.Count;

    /// <summary>
    /// Decodes one payload. Returns false when the payload is too short for its declared event (corrupt).
    /// <paramref name="updateNames"/> false leaves the thread names alone: a reader that already gave them with
    /// <see cref="Inspect"/> in file order and decodes later, in time order (perf.data), passes false.
    /// </summary>
    public bool Decode(ReadOnlySpan<byte> payload, long timestamp, int cpu, ref KernelEvent e, bool updateNames = true)
    {
        e = default;
        e.Timestamp = timestamp;
        e.Cpu = cpu;
        if (payload.Length < _commonEnd) return false;
        // Every read below lies inside the payload: the common fields within _commonEnd (flags checked on their own),
        // an event type's fields within its MinLength, checked before its case.
        ref var p = ref MemoryMarshal.GetReference(payload);
        e.Pid = _commonPid.ReadInt32Known(ref p);
        // Interrupt-context events carry the interrupted thread as common_pid; the flags tell them apart.
        if (payload.Length >= _commonFlags.End) e.Flags = (byte)_commonFlags.ReadKnown(ref p);
        var id = (int)_commonType.ReadKnown(ref p);
        var entries = _entries;
        if ((uint)id >= (uint)entries.Length || !entries[id].Known)
        {
            UnknownEventCount++;
            return true;
        }

        ref readonly var x = ref entries[id];
        if (x.Kind == DecodeKind.Other) return true;
        if (payload.Length < x.MinLength) return false;
        switch (x.Kind)
        {
            case DecodeKind.Switch:
                e.Kind = KernelEventKind.Switch;
                e.Tid = x.A.ReadInt32Known(ref p);
                e.Prio = x.B.ReadInt32Known(ref p);
                e.State = x.C.ReadKnown(ref p);
                e.Tid2 = x.D.ReadInt32Known(ref p);
                e.Prio2 = x.E.ReadInt32Known(ref p);
                if (updateNames)
                {
                    UpdateName(e.Tid, x.Comm1, payload);
                    UpdateName(e.Tid2, x.Comm2, payload);
                }

                break;
            case DecodeKind.Waking:
            case DecodeKind.WakeupNew:
                e.Kind = x.Kind == DecodeKind.Waking ? KernelEventKind.Waking : KernelEventKind.WakeupNew;
                e.Tid = x.A.ReadInt32Known(ref p);
                e.Cpu2 = x.B.ReadInt32Known(ref p);
                e.Prio = x.C.ReadInt32Known(ref p);
                if (updateNames) UpdateName(e.Tid, x.Comm1, payload);
                break;
            case DecodeKind.Migrate:
                e.Kind = KernelEventKind.Migrate;
                e.Tid = x.A.ReadInt32Known(ref p);
                e.Cpu2 = x.B.ReadInt32Known(ref p);
                e.Cpu3 = x.C.ReadInt32Known(ref p);
                e.Prio = x.D.ReadInt32Known(ref p);
                if (updateNames) UpdateName(e.Tid, x.Comm1, payload);
                break;
            case DecodeKind.Fork:
                e.Kind = KernelEventKind.Fork;
                e.Tid = x.A.ReadInt32Known(ref p);
                e.Tid2 = x.B.ReadInt32Known(ref p);
                if (updateNames)
                {
                    UpdateName(e.Tid, x.Comm1, payload);
                    UpdateName(e.Tid2, x.Comm2, payload);
                }

                break;
            case DecodeKind.Exec:
                e.Kind = KernelEventKind.Exec;
                e.Tid = x.A.ReadInt32Known(ref p);
                e.Tid2 = x.B.ReadInt32Known(ref p);
                e.Text = Encoding.UTF8.GetString(x.Text.Resolve(payload));
                break;
            case DecodeKind.Exit:
                e.Kind = KernelEventKind.Exit;
                e.Tid = x.A.ReadInt32Known(ref p);
                e.Prio = x.B.ReadInt32Known(ref p);
                if (updateNames) UpdateName(e.Tid, x.Comm1, payload);
                break;
            case DecodeKind.SyscallEnter:
                e.Kind = KernelEventKind.SyscallEnter;
                e.SyscallNr = x.A.ReadInt32Known(ref p);
                e.Arg0 = x.B.ReadKnown(ref p);
                e.Arg1 = x.C.ReadKnown(ref p);
                e.Arg2 = x.D.ReadKnown(ref p);
                e.Arg3 = x.E.ReadKnown(ref p);
                break;
            case DecodeKind.SyscallExit:
                e.Kind = KernelEventKind.SyscallExit;
                e.SyscallNr = x.A.ReadInt32Known(ref p);
                e.Ret = x.B.ReadKnown(ref p);
                break;
            case DecodeKind.Print:
            {
                e.Kind = KernelEventKind.Marker;
                e.Tid = e.Pid;
                var text = x.Text.Resolve(payload);
                if (!text.IsEmpty && text[^1] == (byte)'\n') text = text[..^1];
                e.Text = _markers.Get(text);
                break;
            }
        }

        return true;
    }

    /// <summary>
    /// <see cref="Inspect"/> for a reader that checks every payload in a tight loop: the length check is one table
    /// read per event type, and only payloads that carry thread names (sched events) go to <see cref="Inspect"/>.
    /// Same result and same name changes as <see cref="Inspect"/>.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool Check(ReadOnlySpan<byte> payload)
    {
        if (payload.Length < _commonEnd) return false;
        var id = (int)_commonType.ReadKnown(ref MemoryMarshal.GetReference(payload));
        var quick = _quick;
        var q = (uint)id < (uint)quick.Length ? quick[id] : 0;
        if (q == 0) return true;
        if (payload.Length < (q & QuickLengthMask)) return false;
        return (q & QuickNames) == 0 || Inspect(payload);
    }

    private const int QuickNames = 1 << 30;
    private const int QuickLengthMask = QuickNames - 1;

    /// <summary>Per event type id, for <see cref="Check"/>: the shortest payload decoded, and <see cref="QuickNames"/> when the payload names threads.</summary>
    private readonly int[] _quick;

    private static int[] BuildQuick(Entry[] entries)
    {
        var quick = new int[entries.Length];
        for (var id = 0; id < entries.Length; id++)
        {
            ref readonly var x = ref entries[id];
            if (!x.Known || x.Kind == DecodeKind.Other) continue;
            var names = x.Kind is DecodeKind.Switch or DecodeKind.Fork or DecodeKind.Waking or DecodeKind.WakeupNew or DecodeKind.Migrate or DecodeKind.Exit;
            // A minimum length beyond the mask cannot be met by a perf record (u16 size): Inspect answers those.
            quick[id] = x.MinLength > QuickLengthMask ? QuickNames : Math.Max(x.MinLength, 0) | (names ? QuickNames : 0);
        }

        return quick;
    }

    /// <summary>
    /// Without decoding: false exactly when <see cref="Decode"/> would find the payload too short, and otherwise the
    /// thread names the payload carries go to the thread table as <see cref="Decode"/> gives them. A reader that
    /// decodes events later and in another order calls this in file order, so names change in the same order.
    /// </summary>
    public bool Inspect(ReadOnlySpan<byte> payload)
    {
        if (payload.Length < _commonPid.End || payload.Length < _commonType.End) return false;
        var id = (int)_commonType.Read(payload);
        if ((uint)id >= (uint)_entries.Length || !_entries[id].Known) return true;
        ref readonly var x = ref _entries[id];
        if (x.Kind == DecodeKind.Other) return true;
        if (payload.Length < x.MinLength) return false;
        switch (x.Kind)
        {
            case DecodeKind.Switch:
                UpdateName(x.A.ReadInt32(payload), x.Comm1, payload);
                UpdateName(x.D.ReadInt32(payload), x.Comm2, payload);
                break;
            case DecodeKind.Fork:
                UpdateName(x.A.ReadInt32(payload), x.Comm1, payload);
                UpdateName(x.B.ReadInt32(payload), x.Comm2, payload);
                break;
            case DecodeKind.Waking:
            case DecodeKind.WakeupNew:
            case DecodeKind.Migrate:
            case DecodeKind.Exit:
                UpdateName(x.A.ReadInt32(payload), x.Comm1, payload);
                break;
        }

        return true;
    }

    private void UpdateName(int tid, ReadOnlySpan<byte> comm)
    {
        // The idle tasks all have pid 0 but per-CPU names (swapper/0, swapper/1); recording them would flip the
        // name, and allocate, on every idle switch.
        if (tid <= 0 || comm.IsEmpty) return;
        _threads.SetName(tid, comm);
    }

    /// <summary>
    /// Names a thread from a fixed 16-byte comm array (sched_switch, sched_waking ...), skipping the name table when
    /// these exact 16 bytes were the last ones given for this tid: a switch names two threads, and the table lookup
    /// and compare were a large share of decoding. Direct-mapped by tid; a collision only costs the table lookup.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void UpdateName(int tid, in TextRef comm, ReadOnlySpan<byte> payload)
    {
        if (tid <= 0) return;
        if (comm.Fixed16 && comm.Offset + 16 <= payload.Length)
        {
            ref var at = ref Unsafe.Add(ref MemoryMarshal.GetReference(payload), comm.Offset);
            var lo = BinaryPrimitives.ReadUInt64LittleEndian(MemoryMarshal.CreateReadOnlySpan(ref at, 8));
            var hi = BinaryPrimitives.ReadUInt64LittleEndian(MemoryMarshal.CreateReadOnlySpan(ref Unsafe.Add(ref at, 8), 8));
            ref readonly var slot = ref _nameCache[tid & (NameCacheSize - 1)];
            if (slot.Tid == tid && slot.Lo == lo && slot.Hi == hi) return;
            NameChanged(tid, comm, payload, lo, hi);
            return;
        }

        UpdateName(tid, comm.Resolve(payload));
    }

    /// <summary>The comm cache's miss path, kept out of line so the hit stays small enough to inline.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void NameChanged(int tid, in TextRef comm, ReadOnlySpan<byte> payload, ulong lo, ulong hi)
    {
        UpdateName(tid, comm.Resolve(payload));
        _nameCache[tid & (NameCacheSize - 1)] = new NameCacheEntry(tid, lo, hi);
    }

    /// <summary>
    /// Sets a thread's name from outside the event stream (perf COMM records), keeping the comm cache honest: the
    /// next event naming this tid goes to the table again.
    /// </summary>
    public void SetThreadName(int tid, ReadOnlySpan<byte> comm)
    {
        ref var slot = ref _nameCache[tid & (NameCacheSize - 1)];
        if (slot.Tid == tid) slot = default;
        _threads.SetName(tid, comm);
    }

    private const int NameCacheSize = 4096;

    private readonly record struct NameCacheEntry(int Tid, ulong Lo, ulong Hi);

    private readonly NameCacheEntry[] _nameCache = new NameCacheEntry[NameCacheSize];

    private static Entry Build(FtraceEventFormat f, bool hasWaking)
    {
        var x = new Entry { Known = true };
        switch (f.System, f.Name)
        {
            case ("sched", "sched_switch"):
                x.Kind = DecodeKind.Switch;
                x.A = Scalar(f, "prev_pid");
                x.B = Scalar(f, "prev_prio");
                x.C = Scalar(f, "prev_state");
                x.D = Scalar(f, "next_pid");
                x.E = Scalar(f, "next_prio");
                x.Comm1 = TextField(f, "prev_comm");
                x.Comm2 = TextField(f, "next_comm");
                break;
            case ("sched", "sched_waking"):
            case ("sched", "sched_wakeup") when !hasWaking:
            case ("sched", "sched_wakeup_new"):
                x.Kind = f.Name == "sched_wakeup_new" ? DecodeKind.WakeupNew : DecodeKind.Waking;
                x.A = Scalar(f, "pid");
                x.B = Scalar(f, "target_cpu");
                x.C = Scalar(f, "prio");
                x.Comm1 = TextField(f, "comm");
                break;
            case ("sched", "sched_migrate_task"):
                x.Kind = DecodeKind.Migrate;
                x.A = Scalar(f, "pid");
                x.B = Scalar(f, "orig_cpu");
                x.C = Scalar(f, "dest_cpu");
                x.D = Scalar(f, "prio");
                x.Comm1 = TextField(f, "comm");
                break;
            case ("sched", "sched_process_fork"):
                x.Kind = DecodeKind.Fork;
                x.A = Scalar(f, "parent_pid");
                x.B = Scalar(f, "child_pid");
                x.Comm1 = TextField(f, "parent_comm");
                x.Comm2 = TextField(f, "child_comm");
                break;
            case ("sched", "sched_process_exec"):
                x.Kind = DecodeKind.Exec;
                x.A = Scalar(f, "pid");
                x.B = Scalar(f, "old_pid");
                x.Text = TextField(f, "filename");
                break;
            case ("sched", "sched_process_exit"):
                x.Kind = DecodeKind.Exit;
                x.A = Scalar(f, "pid");
                x.B = Scalar(f, "prio");
                x.Comm1 = TextField(f, "comm");
                break;
            case ("raw_syscalls", "sys_enter"):
            {
                x.Kind = DecodeKind.SyscallEnter;
                x.A = Scalar(f, "id");
                if (f.Field("args") is { ArrayLength: >= 4 } args)
                {
                    var elem = args.Size / args.ArrayLength;
                    x.B = FieldReader.FromArrayElement(args, 0, elem);
                    x.C = FieldReader.FromArrayElement(args, 1, elem);
                    x.D = FieldReader.FromArrayElement(args, 2, elem);
                    x.E = FieldReader.FromArrayElement(args, 3, elem);
                }

                break;
            }
            case ("raw_syscalls", "sys_exit"):
                x.Kind = DecodeKind.SyscallExit;
                x.A = Scalar(f, "id");
                x.B = Scalar(f, "ret");
                break;
            case ("syscalls", _) when f.Name.StartsWith("sys_enter_", StringComparison.Ordinal):
            {
                x.Kind = DecodeKind.SyscallEnter;
                x.A = Scalar(f, "__syscall_nr");
                var args = new FieldReader[4];
                var n = 0;
                foreach (var field in f.Fields)
                {
                    if (field.IsCommon || field.Name == "__syscall_nr") continue;
                    if (n == 4) break;
                    args[n++] = FieldReader.From(field);
                }

                (x.B, x.C, x.D, x.E) = (args[0], args[1], args[2], args[3]);
                break;
            }
            case ("syscalls", _) when f.Name.StartsWith("sys_exit_", StringComparison.Ordinal):
                x.Kind = DecodeKind.SyscallExit;
                x.A = Scalar(f, "__syscall_nr");
                x.B = Scalar(f, "ret");
                break;
            case ("ftrace", "print"):
                x.Kind = DecodeKind.Print;
                x.Text = TextField(f, "buf");
                break;
            default:
                x.Kind = DecodeKind.Other;
                break;
        }

        x.MinLength = Max(x.A.End, x.B.End, x.C.End, x.D.End, x.E.End);
        x.MinLength = Math.Max(x.MinLength, Math.Max(x.Comm1.MinLength, Math.Max(x.Comm2.MinLength, x.Text.MinLength)));
        return x;
    }

    private static int Max(int a, int b, int c, int d, int e) => Math.Max(Math.Max(Math.Max(a, b), Math.Max(c, d)), e);

    private static FieldReader Scalar(FtraceEventFormat f, string name) => FieldReader.From(f.Field(name));

    private static TextRef TextField(FtraceEventFormat f, string name)
    {
        if (f.Field(name) is not { } field) return default;
        return new TextRef
        {
            Present = true,
            DataLoc = field.IsDynamic,
            RelLoc = field.IsRelative,
            Offset = field.Offset,
            Size = field.IsDynamic ? 0 : field.Size,
            Fixed16 = !field.IsDynamic && field.Size == 16,
        };
    }
}
