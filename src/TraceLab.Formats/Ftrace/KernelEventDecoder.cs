using System.Buffers.Binary;
using System.Diagnostics;
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
        NewTask,
        Exec,
        Exit,
        SyscallEnter,
        SyscallExit,
        Print,
    }

    /// <summary>Slots per event type, named per kind by the constants in <see cref="Table"/>'s rows.</summary>
    private const int MaxSlots = 5;

    [InlineArray(MaxSlots)]
    private struct Slots
    {
        private FieldReader _first;
    }

    private struct Entry
    {
        public DecodeKind Kind;
        public bool Known;
        public int MinLength;
        public Slots Fields;
        /// <summary>The slot holding the tid that <see cref="Comm1"/> / <see cref="Comm2"/> name; -1: none.</summary>
        public int Comm1Tid, Comm2Tid;
        /// <summary>
        /// The fields of those slots, copied out of <see cref="Fields"/>: naming reads them at a fixed place in the
        /// entry, not through an index into the slots.
        /// </summary>
        public FieldReader Comm1TidField, Comm2TidField;
        public TextRef Comm1, Comm2, Text;
    }

    // Slot names per kind: where Build puts each ftrace field and Decode reads it.
    private static class SwitchSlot
    {
        public const int PrevPid = 0, PrevPrio = 1, PrevState = 2, NextPid = 3, NextPrio = 4;
    }

    private static class WakeSlot { public const int Pid = 0, TargetCpu = 1, Prio = 2; }
    private static class MigrateSlot { public const int Pid = 0, OrigCpu = 1, DestCpu = 2, Prio = 3; }
    private static class ForkSlot { public const int ParentPid = 0, ChildPid = 1; }
    private static class NewTaskSlot { public const int Pid = 0, CloneFlags = 1; }

    /// <summary>
    /// clone(2)'s CLONE_THREAD (include/uapi/linux/sched.h): the new task joins its creator's process.
    /// </summary>
    private const long CloneThread = 0x00010000;
    private static class ExecSlot { public const int Pid = 0, OldPid = 1; }
    private static class ExitSlot { public const int Pid = 0, Prio = 1; }
    private static class SyscallSlot { public const int Nr = 0, Arg0 = 1, Arg1 = 2, Arg2 = 3, Arg3 = 4, Ret = 1; }

    /// <summary>Where a syscall entry's four arguments come from.</summary>
    private enum SyscallArgs : byte { None, ArgsArray, FirstFields }

    /// <summary>
    /// One decoded event type: the ftrace fields read into which slots, the comm fields naming the thread in which
    /// slot, the text field, and where syscall arguments come from.
    /// </summary>
    private sealed record Row(
        DecodeKind Kind, (int Slot, string Field)[] Fields, (int TidSlot, string Field)? Comm1 = null,
        (int TidSlot, string Field)? Comm2 = null, string? Text = null, SyscallArgs Args = SyscallArgs.None);

    /// <summary>
    /// The one table of what TraceLab decodes, by kind: <see cref="Build"/> resolves it against the trace's formats,
    /// <see cref="Decode"/> reads the slots it names and, like <see cref="Inspect"/>, names threads from its comms.
    /// </summary>
    private static readonly Dictionary<DecodeKind, Row> Table = new Row[]
    {
        new(DecodeKind.Switch,
            [(SwitchSlot.PrevPid, "prev_pid"), (SwitchSlot.PrevPrio, "prev_prio"), (SwitchSlot.PrevState, "prev_state"),
             (SwitchSlot.NextPid, "next_pid"), (SwitchSlot.NextPrio, "next_prio")],
            Comm1: (SwitchSlot.PrevPid, "prev_comm"), Comm2: (SwitchSlot.NextPid, "next_comm")),
        new(DecodeKind.Waking, [(WakeSlot.Pid, "pid"), (WakeSlot.TargetCpu, "target_cpu"), (WakeSlot.Prio, "prio")],
            Comm1: (WakeSlot.Pid, "comm")),
        new(DecodeKind.WakeupNew, [(WakeSlot.Pid, "pid"), (WakeSlot.TargetCpu, "target_cpu"), (WakeSlot.Prio, "prio")],
            Comm1: (WakeSlot.Pid, "comm")),
        new(DecodeKind.Migrate,
            [(MigrateSlot.Pid, "pid"), (MigrateSlot.OrigCpu, "orig_cpu"), (MigrateSlot.DestCpu, "dest_cpu"),
             (MigrateSlot.Prio, "prio")],
            Comm1: (MigrateSlot.Pid, "comm")),
        new(DecodeKind.Fork, [(ForkSlot.ParentPid, "parent_pid"), (ForkSlot.ChildPid, "child_pid")],
            Comm1: (ForkSlot.ParentPid, "parent_comm"), Comm2: (ForkSlot.ChildPid, "child_comm")),
        // task:task_newtask, logged by the creating thread inside clone(): the child's tid and its clone flags, which
        // tell a thread from a process before the child's first event (sched_process_fork does not say).
        new(DecodeKind.NewTask, [(NewTaskSlot.Pid, "pid"), (NewTaskSlot.CloneFlags, "clone_flags")],
            Comm1: (NewTaskSlot.Pid, "comm")),
        new(DecodeKind.Exec, [(ExecSlot.Pid, "pid"), (ExecSlot.OldPid, "old_pid")], Text: "filename"),
        new(DecodeKind.Exit, [(ExitSlot.Pid, "pid"), (ExitSlot.Prio, "prio")], Comm1: (ExitSlot.Pid, "comm")),
        new(DecodeKind.SyscallEnter, [(SyscallSlot.Nr, "id")], Args: SyscallArgs.ArgsArray),
        new(DecodeKind.SyscallExit, [(SyscallSlot.Nr, "id"), (SyscallSlot.Ret, "ret")]),
        new(DecodeKind.Print, [], Text: "buf"),
    }.ToDictionary(r => r.Kind);

    /// <summary>Per-syscall events (syscalls/sys_enter_NAME) name the number differently and list their arguments.
    /// </summary>
    private static readonly Row SyscallEnterNamed =
        new(DecodeKind.SyscallEnter, [(SyscallSlot.Nr, "__syscall_nr")], Args: SyscallArgs.FirstFields);
    private static readonly Row SyscallExitNamed =
        new(DecodeKind.SyscallExit, [(SyscallSlot.Nr, "__syscall_nr"), (SyscallSlot.Ret, "ret")]);

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
    /// <summary>
    /// The common fields are where every Linux kernel puts them (u16 common_type at 0, u8 common_flags at 2, a 4-byte
    /// common_pid at 4) on a little-endian host: <see cref="Decode"/> reads them directly.
    /// </summary>
    private readonly bool _standardCommon;

    /// <summary>For tests: whether <see cref="Decode"/> reads the common fields directly.</summary>
    internal bool ReadsCommonFieldsDirectly => _standardCommon;
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
        _standardCommon = BitConverter.IsLittleEndian && _commonType.Is(0, 2, signed: false)
            && _commonPid.Is(4, 4) && _commonFlags.Is(2, 1)
            && _commonEnd >= 8;
        _quick = BuildQuick(_entries);
    }

    /// <summary>
    /// Events whose type id has no format; they are passed on as <see cref="KernelEventKind.Other"/>.
    /// </summary>
    public long UnknownEventCount { get; private set; }

    /// <summary>Whether events of format <paramref name="id"/> decode to markers (ftrace's print event).</summary>
    public bool IsMarkerFormat(long id) =>
        id >= 0 && id < _entries.Length && _entries[id].Known && _entries[id].Kind == DecodeKind.Print;

    /// <summary>
    /// Decodes ftrace's print event as <see cref="KernelEventKind.Other"/> from now on: for a perf.data that did not
    /// record it, whose samples can then carry a print payload only if the file was forged, so that the trace holds
    /// no markers exactly when <see cref="TraceInfo.MayHaveMarkers"/> says so.
    /// </summary>
    public void DecodeMarkersAsOther()
    {
        for (var id = 0; id < _entries.Length; id++)
            if (_entries[id].Kind == DecodeKind.Print) _entries[id] = KnownEntry(DecodeKind.Other);
        _quick = BuildQuick(_entries);
    }

    /// <summary>Distinct marker texts interned so far.</summary>
    public int InternedMarkerCount => _markers.Count;

    /// <summary>
    /// Decodes one payload. Returns false when the payload is too short for its declared event (corrupt).
    /// <paramref name="updateNames"/> false leaves the thread names alone: a reader that already gave them with
    /// <see cref="Inspect"/> in file order and decodes later, in time order (perf.data), passes false.
    /// </summary>
    /// <remarks>
    /// Inlined where events are decoded: an unmodelled event (most of a busy system's: `sched_stat_runtime`) is done
    /// after its common fields, without a call; the other kinds go on in <see cref="DecodeFields"/>.
    /// </remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool Decode(ReadOnlySpan<byte> payload, long timestamp, int cpu, ref KernelEvent e, bool updateNames = true)
    {
        e = default;
        e.Timestamp = timestamp;
        e.Cpu = cpu;
        if (payload.Length < _commonEnd) return false;
        // Every read below lies inside the payload: the common fields within _commonEnd (flags checked on their own),
        // an event type's fields within its MinLength, checked before its case.
        ref var p = ref MemoryMarshal.GetReference(payload);
        int id;
        if (_standardCommon)
        {
            // The common fields where every kernel puts them (checked in the constructor): read without the size
            // tests of FieldReader, which were most of the instructions spent on an unmodelled event.
            e.CurrentTid = Unsafe.ReadUnaligned<int>(ref Unsafe.Add(ref p, 4));
            e.Flags = Unsafe.Add(ref p, 2);
            id = Unsafe.ReadUnaligned<ushort>(ref p);
        }
        else
        {
            e.CurrentTid = _commonPid.ReadInt32Known(ref p);
            // Interrupt-context events carry the interrupted thread as common_pid; the flags tell them apart.
            if (payload.Length >= _commonFlags.End) e.Flags = (byte)_commonFlags.ReadKnown(ref p);
            id = (int)_commonType.ReadKnown(ref p);
        }

        var entries = _entries;
        if ((uint)id >= (uint)entries.Length || !entries[id].Known)
        {
            UnknownEventCount++;
            return true;
        }

        return entries[id].Kind == DecodeKind.Other || DecodeFields(payload, timestamp, ref e, id, updateNames);
    }

    /// <summary>
    /// The rest of <see cref="Decode"/> for an event of a modelled kind (<paramref name="id"/> a known one): its
    /// fields, and its threads' names.
    /// </summary>
    private bool DecodeFields(ReadOnlySpan<byte> payload, long timestamp, ref KernelEvent e, int id, bool updateNames)
    {
        ref readonly var x = ref _entries[id];
        if (payload.Length < x.MinLength) return false;
        ref var p = ref MemoryMarshal.GetReference(payload);
        ref readonly var f = ref x.Fields;
        // Syscall entries and exits (two thirds of a lock-heavy trace's events) are tested for first: a
        // taken/not-taken branch predicts better than the switch's indirect jump over kinds that alternate.
        var kind = x.Kind;
        if (kind == DecodeKind.SyscallEnter)
        {
            e.Kind = KernelEventKind.SyscallEnter;
            e.SyscallNr = f[SyscallSlot.Nr].ReadInt32Known(ref p);
            e.Arg0 = f[SyscallSlot.Arg0].ReadKnown(ref p);
            e.Arg1 = f[SyscallSlot.Arg1].ReadKnown(ref p);
            e.Arg2 = f[SyscallSlot.Arg2].ReadKnown(ref p);
            e.Arg3 = f[SyscallSlot.Arg3].ReadKnown(ref p);
            return true;
        }
        if (kind == DecodeKind.SyscallExit)
        {
            e.Kind = KernelEventKind.SyscallExit;
            e.SyscallNr = f[SyscallSlot.Nr].ReadInt32Known(ref p);
            e.Ret = f[SyscallSlot.Ret].ReadKnown(ref p);
            return true;
        }
        switch (kind)
        {
            case DecodeKind.Switch:
                e.Kind = KernelEventKind.Switch;
                e.Tid = f[SwitchSlot.PrevPid].ReadInt32Known(ref p);
                e.Prio = f[SwitchSlot.PrevPrio].ReadInt32Known(ref p);
                e.State = f[SwitchSlot.PrevState].ReadKnown(ref p);
                e.Tid2 = f[SwitchSlot.NextPid].ReadInt32Known(ref p);
                e.Prio2 = f[SwitchSlot.NextPrio].ReadInt32Known(ref p);
                // The hot kinds name their threads from the tids just read (Table pairs the comms with these slots,
                // checked in Build): reading the tids again through the entry made decoding ~10 % slower.
                if (updateNames)
                {
                    UpdateName(e.Tid, x.Comm1, payload, timestamp);
                    UpdateName(e.Tid2, x.Comm2, payload, timestamp);
                }

                return true;
            case DecodeKind.Waking:
            case DecodeKind.WakeupNew:
                e.Kind = x.Kind == DecodeKind.Waking ? KernelEventKind.Waking : KernelEventKind.WakeupNew;
                e.Tid = f[WakeSlot.Pid].ReadInt32Known(ref p);
                e.Cpu2 = f[WakeSlot.TargetCpu].ReadInt32Known(ref p);
                e.Prio = f[WakeSlot.Prio].ReadInt32Known(ref p);
                if (updateNames) UpdateName(e.Tid, x.Comm1, payload, timestamp);
                return true;
            case DecodeKind.Migrate:
                e.Kind = KernelEventKind.Migrate;
                e.Tid = f[MigrateSlot.Pid].ReadInt32Known(ref p);
                e.Cpu2 = f[MigrateSlot.OrigCpu].ReadInt32Known(ref p);
                e.Cpu3 = f[MigrateSlot.DestCpu].ReadInt32Known(ref p);
                e.Prio = f[MigrateSlot.Prio].ReadInt32Known(ref p);
                break;
            case DecodeKind.Fork:
                e.Kind = KernelEventKind.Fork;
                e.Tid = f[ForkSlot.ParentPid].ReadInt32Known(ref p);
                e.Tid2 = f[ForkSlot.ChildPid].ReadInt32Known(ref p);
                break;
            case DecodeKind.NewTask:
                e.Kind = KernelEventKind.Fork;
                e.Tid = e.CurrentTid;
                e.Tid2 = f[NewTaskSlot.Pid].ReadInt32Known(ref p);
                // A kernel whose format lacks clone_flags says nothing about the kind: Unknown, not Process.
                if (f[NewTaskSlot.CloneFlags].IsPresent)
                {
                    e.Prio = (int)((f[NewTaskSlot.CloneFlags].ReadKnown(ref p) & CloneThread) != 0
                        ? ForkChild.Thread : ForkChild.Process);
                }
                break;
            case DecodeKind.Exec:
                e.Kind = KernelEventKind.Exec;
                e.Tid = f[ExecSlot.Pid].ReadInt32Known(ref p);
                e.Tid2 = f[ExecSlot.OldPid].ReadInt32Known(ref p);
                e.Text = Encoding.UTF8.GetString(x.Text.Resolve(payload));
                break;
            case DecodeKind.Exit:
                e.Kind = KernelEventKind.Exit;
                e.Tid = f[ExitSlot.Pid].ReadInt32Known(ref p);
                e.Prio = f[ExitSlot.Prio].ReadInt32Known(ref p);
                // The name the thread ends with (once per thread): the thread table holds only a tid's last name,
                // which is a later thread's when the tid is reused.
                e.Text = x.Comm1Tid >= 0 ? ExitComm(x.Comm1.Resolve(payload)) : null;
                break;
            case DecodeKind.Print:
                {
                    e.Kind = KernelEventKind.Marker;
                    e.Tid = e.CurrentTid;
                    var text = x.Text.Resolve(payload);
                    if (!text.IsEmpty && text[^1] == (byte)'\n') text = text[..^1];
                    e.Text = _markers.Get(text);
                    return true;
                }
        }

        if (updateNames) NameThreads(x, payload, timestamp);
        return true;
    }

    /// <summary>
    /// <see cref="Inspect"/> for a reader that checks every payload in a tight loop: the length check is one table
    /// read per event type, and only payloads that carry thread names (sched events) go to <see cref="Inspect"/>.
    /// Same result and same name changes as <see cref="Inspect"/>.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool Check(ReadOnlySpan<byte> payload, long timestamp)
    {
        if (payload.Length < _commonEnd) return false;
        ref var p = ref MemoryMarshal.GetReference(payload);
        var id = _standardCommon ? Unsafe.ReadUnaligned<ushort>(ref p) : (int)_commonType.ReadKnown(ref p);
        var quick = _quick;
        var q = (uint)id < (uint)quick.Length ? quick[id] : 0;
        if (q == 0) return true;
        if (payload.Length < (q & QuickLengthMask)) return false;
        if ((q & QuickNames) == 0) return true;
        if ((q & QuickInspect) != 0) return Inspect(payload, timestamp);
        NameThreadsOf(id, payload, timestamp);
        return true;
    }

    /// <summary><see cref="Inspect"/>'s names, for a payload <see cref="Check"/> found long enough.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void NameThreadsOf(int id, ReadOnlySpan<byte> payload, long timestamp) =>
        NameThreads(_entries[id], payload, timestamp);

    private const int QuickNames = 1 << 30;
    /// <summary>The length in the entry is not the type's minimum (beyond the mask): <see cref="Inspect"/>
    /// decides.</summary>
    private const int QuickInspect = 1 << 29;
    private const int QuickLengthMask = QuickInspect - 1;

    /// <summary>
    /// Per event type id, for <see cref="Check"/>: the shortest payload decoded, and <see cref="QuickNames"/> when the
    /// payload names threads.
    /// </summary>
    private int[] _quick;

    private static int[] BuildQuick(Entry[] entries)
    {
        var quick = new int[entries.Length];
        for (var id = 0; id < entries.Length; id++)
        {
            ref readonly var x = ref entries[id];
            if (!x.Known || x.Kind == DecodeKind.Other) continue;
            var names = x.Comm1Tid >= 0;
            // A minimum length beyond the mask cannot be met by a perf record (u16 size): Inspect answers those.
            quick[id] = x.MinLength > QuickLengthMask
                ? QuickNames | QuickInspect
                : Math.Max(x.MinLength, 0) | (names ? QuickNames : 0);
        }

        return quick;
    }

    /// <summary>
    /// Without decoding: false exactly when <see cref="Decode"/> would find the payload too short, and otherwise the
    /// thread names the payload carries go to the thread table as <see cref="Decode"/> gives them. A reader that
    /// decodes events later and in another order calls this in file order, so names change in the same order.
    /// </summary>
    public bool Inspect(ReadOnlySpan<byte> payload, long timestamp)
    {
        if (payload.Length < _commonPid.End || payload.Length < _commonType.End) return false;
        var id = (int)_commonType.Read(payload);
        if ((uint)id >= (uint)_entries.Length || !_entries[id].Known) return true;
        ref readonly var x = ref _entries[id];
        if (x.Kind == DecodeKind.Other) return true;
        if (payload.Length < x.MinLength) return false;
        NameThreads(x, payload, timestamp);
        return true;
    }

    /// <summary>
    /// Gives the thread table the payload's names, paired with tids as <see cref="Table"/> says. The caller has
    /// checked the payload against the entry's MinLength, which covers the tid fields.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void NameThreads(in Entry x, ReadOnlySpan<byte> payload, long at)
    {
        ref var p = ref MemoryMarshal.GetReference(payload);
        if (x.Comm1Tid >= 0) UpdateName(x.Comm1TidField.ReadInt32Known(ref p), x.Comm1, payload, at);
        if (x.Comm2Tid >= 0) UpdateName(x.Comm2TidField.ReadInt32Known(ref p), x.Comm2, payload, at);
    }

    private static string? ExitComm(ReadOnlySpan<byte> comm)
    {
        var len = comm.IndexOf((byte)0);
        if (len >= 0) comm = comm[..len];
        return comm.IsEmpty ? null : Encoding.UTF8.GetString(comm);
    }

    private void UpdateName(int tid, ReadOnlySpan<byte> comm, long at)
    {
        // The idle tasks all have pid 0 but per-CPU names (swapper/0, swapper/1); recording them would flip the
        // name, and allocate, on every idle switch.
        if (tid <= 0 || comm.IsEmpty) return;
        _threads.SetName(tid, comm, at);
    }

    /// <summary>
    /// Names a thread from a fixed 16-byte comm array (sched_switch, sched_waking ...), skipping the name table when
    /// these exact 16 bytes were the last ones given for this tid: a switch names two threads, and the table lookup
    /// and compare were a large share of decoding. Direct-mapped by tid; a collision only costs the table lookup.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void UpdateName(int tid, in TextRef comm, ReadOnlySpan<byte> payload, long at)
    {
        if (tid <= 0) return;
        if (comm.Fixed16 && comm.Offset + 16 <= payload.Length)
        {
            ref var bytes = ref Unsafe.Add(ref MemoryMarshal.GetReference(payload), comm.Offset);
            var lo = BinaryPrimitives.ReadUInt64LittleEndian(MemoryMarshal.CreateReadOnlySpan(ref bytes, 8));
            var hi = BinaryPrimitives.ReadUInt64LittleEndian(
                MemoryMarshal.CreateReadOnlySpan(ref Unsafe.Add(ref bytes, 8), 8));
            ref readonly var slot = ref _nameCache[tid & (NameCacheSize - 1)];
            if (slot.Tid == tid && slot.Lo == lo && slot.Hi == hi) return;
            NameChanged(tid, comm, payload, lo, hi, at);
            return;
        }

        UpdateName(tid, comm.Resolve(payload), at);
    }

    /// <summary>The comm cache's miss path, kept out of line so the hit stays small enough to inline.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void NameChanged(int tid, in TextRef comm, ReadOnlySpan<byte> payload, ulong lo, ulong hi, long at)
    {
        UpdateName(tid, comm.Resolve(payload), at);
        _nameCache[tid & (NameCacheSize - 1)] = new NameCacheEntry(tid, lo, hi);
    }

    /// <summary>
    /// Sets a thread's name from outside the event stream (perf COMM records), keeping the comm cache honest: the
    /// next event naming this tid goes to the table again.
    /// </summary>
    public void SetThreadName(int tid, ReadOnlySpan<byte> comm, long? at)
    {
        ref var slot = ref _nameCache[tid & (NameCacheSize - 1)];
        if (slot.Tid == tid) slot = default;
        _threads.SetName(tid, comm, at);
    }

    private const int NameCacheSize = 4096;

    private readonly record struct NameCacheEntry(int Tid, ulong Lo, ulong Hi);

    private readonly NameCacheEntry[] _nameCache = new NameCacheEntry[NameCacheSize];

    private static Entry Build(FtraceEventFormat f, bool hasWaking)
    {
        var row = (f.System, f.Name) switch
        {
            ("sched", "sched_switch") => Table[DecodeKind.Switch],
            ("sched", "sched_waking") => Table[DecodeKind.Waking],
            ("sched", "sched_wakeup") when !hasWaking => Table[DecodeKind.Waking],
            ("sched", "sched_wakeup_new") => Table[DecodeKind.WakeupNew],
            ("sched", "sched_migrate_task") => Table[DecodeKind.Migrate],
            ("sched", "sched_process_fork") => Table[DecodeKind.Fork],
            ("task", "task_newtask") => Table[DecodeKind.NewTask],
            ("sched", "sched_process_exec") => Table[DecodeKind.Exec],
            ("sched", "sched_process_exit") => Table[DecodeKind.Exit],
            ("raw_syscalls", "sys_enter") => Table[DecodeKind.SyscallEnter],
            ("raw_syscalls", "sys_exit") => Table[DecodeKind.SyscallExit],
            ("syscalls", _) when f.Name.StartsWith("sys_enter_", StringComparison.Ordinal) => SyscallEnterNamed,
            ("syscalls", _) when f.Name.StartsWith("sys_exit_", StringComparison.Ordinal) => SyscallExitNamed,
            ("ftrace", "print") => Table[DecodeKind.Print],
            _ => null,
        };
        var x = KnownEntry(row?.Kind ?? DecodeKind.Other);
        if (row is null) return x;

        foreach (var (slot, name) in row.Fields) x.Fields[slot] = Scalar(f, name);
        if (row.Comm1 is { } c1) (x.Comm1Tid, x.Comm1) = (c1.TidSlot, TextField(f, c1.Field));
        if (row.Comm2 is { } c2) (x.Comm2Tid, x.Comm2) = (c2.TidSlot, TextField(f, c2.Field));
        if (row.Text is { } text) x.Text = TextField(f, text);
        Debug.Assert(row.Kind != DecodeKind.Switch
            || (row.Comm1?.TidSlot == SwitchSlot.PrevPid && row.Comm2?.TidSlot == SwitchSlot.NextPid));
        Debug.Assert(row.Kind is not (DecodeKind.Waking or DecodeKind.WakeupNew) || row.Comm1?.TidSlot == WakeSlot.Pid);
        if (x.Comm1Tid >= 0) x.Comm1TidField = x.Fields[x.Comm1Tid];
        if (x.Comm2Tid >= 0) x.Comm2TidField = x.Fields[x.Comm2Tid];
        if (row.Args == SyscallArgs.ArgsArray && f.Field("args") is { ArrayLength: >= 4 } args)
        {
            var elem = args.Size / args.ArrayLength;
            for (var i = 0; i < 4; i++) x.Fields[SyscallSlot.Arg0 + i] = FieldReader.FromArrayElement(args, i, elem);
        }
        else if (row.Args == SyscallArgs.FirstFields)
        {
            var n = 0;
            foreach (var field in f.Fields)
            {
                if (field.IsCommon || field.Name == "__syscall_nr") continue;
                if (n == 4) break;
                x.Fields[SyscallSlot.Arg0 + n++] = FieldReader.From(field);
            }
        }

        for (var i = 0; i < MaxSlots; i++) x.MinLength = Math.Max(x.MinLength, x.Fields[i].End);
        x.MinLength = Math.Max(x.MinLength, Math.Max(x.Comm1.MinLength, Math.Max(x.Comm2.MinLength, x.Text.MinLength)));
        return x;
    }

    /// <summary>An entry of a known format with nothing resolved yet (no comm fields).</summary>
    private static Entry KnownEntry(DecodeKind kind) =>
        new() { Known = true, Kind = kind, Comm1Tid = -1, Comm2Tid = -1 };

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
