using System.Runtime.InteropServices;

namespace TraceLab.Core;

/// <summary>
/// The call stacks of one trace, each stored once: a reader interns the frames of every stack it decodes and puts
/// the id on the event (<see cref="KernelEvent.StackId"/>). Interning a stack seen before costs a hash and a compare
/// and allocates nothing, so memory grows with the distinct stacks, not with the events. A stack belongs to one
/// process (the same addresses mean different code in two processes): the process is part of its identity.
/// </summary>
public sealed class StackTable
{
    private ulong[] _frames = new ulong[1024];
    private int _frameCount;
    private Entry[] _entries = new Entry[64];
    /// <summary>Open-addressed hash of entry ids (0: empty slot).</summary>
    private int[] _slots = new int[128];

    private struct Entry
    {
        public int Start;
        public int Length;
        public int KernelFrames;
        public int Process;
        public long FirstSeen;
        public int Hash;
        public int Generation;
    }

    /// <summary>Distinct stacks interned so far; ids run from 1 to this.</summary>
    public int Count { get; private set; }

    /// <summary>Stacks offered to <see cref="Intern"/> (events that carried one).</summary>
    public long Interned { get; private set; }

    /// <summary>
    /// Callchains whose frames could not all be read (a corrupt count, an entry past the record's end): kept with
    /// the frames read before the damage.
    /// </summary>
    public long Truncated { get; set; }

    /// <summary>User stacks unwound from copies of the stack (perf record --call-graph dwarf).</summary>
    public long Unwound { get; set; }

    /// <summary>
    /// Of <see cref="Unwound"/>, those that stopped before the outermost frame: an address without call frame
    /// information, a saved register beyond the copy, rules that do not lead up the stack.
    /// </summary>
    public long UnwoundShort { get; set; }

    /// <summary>
    /// The id of the stack <paramref name="frames"/> of <paramref name="process"/> (innermost frame first, the
    /// first <paramref name="kernelFrames"/> of them in the kernel), added when new; 0 for an empty stack.
    /// </summary>
    /// <param name="time">When the stack was recorded: a new stack keeps its first time, at which its addresses are
    /// looked up in the process's module maps.</param>
    /// <param name="generation">The process's program: its exec count so far (equal addresses in two programs of
    /// one process are different code).</param>
    public int Intern(int process, long time, ReadOnlySpan<ulong> frames, int kernelFrames, int generation = 0)
    {
        if (frames.IsEmpty) return 0;
        Interned++;
        kernelFrames = Math.Clamp(kernelFrames, 0, frames.Length);
        var hash = Hash(process, frames, kernelFrames) ^ generation;
        var mask = _slots.Length - 1;
        for (var slot = (hash & int.MaxValue) & mask; ; slot = (slot + 1) & mask)
        {
            var id = _slots[slot];
            if (id == 0)
            {
                id = Add(process, time, frames, kernelFrames, hash, generation);
                _slots[slot] = id;
                if (Count * 2 > _slots.Length) Rehash();
                return id;
            }

            ref var e = ref _entries[id];
            if (e.Hash == hash && e.Process == process && e.KernelFrames == kernelFrames && e.Generation == generation
                && frames.SequenceEqual(_frames.AsSpan(e.Start, e.Length)))
                return id;
        }
    }

    /// <summary>
    /// A stack whose frames a later record gives (an ETW stack-key reference, whose key is defined when it leaves the
    /// cache or at the session's end): its id now, its frames through <see cref="Define"/>; it has none until then.
    /// It is never shared with an equal interned stack; the event that carries it is counted with
    /// <see cref="Offered"/>.
    /// </summary>
    public int Reserve(int process, long time)
    {
        var id = ++Count;
        if (id >= _entries.Length) Array.Resize(ref _entries, _entries.Length * 2);
        _entries[id] = new Entry { Start = _frameCount, Process = process, FirstSeen = time, Hash = Deferred };
        return id;
    }

    /// <summary>Gives a <see cref="Reserve"/>d stack its frames (innermost first, the first
    /// <paramref name="kernelFrames"/> in the kernel); once.</summary>
    public void Define(int id, ReadOnlySpan<ulong> frames, int kernelFrames)
    {
        ref var e = ref EntryOf(id);
        if (e.Hash != Deferred) throw new InvalidOperationException($"stack {id} is not a reserved one");
        e.Start = Append(frames);
        e.Length = frames.Length;
        e.KernelFrames = Math.Clamp(kernelFrames, 0, frames.Length);
        e.Hash = Defined;
    }

    /// <summary>An event carried a <see cref="Reserve"/>d stack (counted in <see cref="Interned"/>).</summary>
    public void Offered() => Interned++;

    /// <summary>The hash of a reserved stack, before and after its frames came: never in the hash table.</summary>
    private const int Deferred = -1, Defined = -2;

    /// <summary>The frames of stack <paramref name="id"/>, innermost first.</summary>
    public ReadOnlySpan<ulong> Frames(int id)
    {
        ref var e = ref EntryOf(id);
        return _frames.AsSpan(e.Start, e.Length);
    }

    /// <summary>How many of <see cref="Frames"/>' first entries are kernel addresses.</summary>
    public int KernelFrames(int id) => EntryOf(id).KernelFrames;

    /// <summary>The process whose stack it is.</summary>
    public int Process(int id) => EntryOf(id).Process;

    /// <summary>When the stack was first recorded (trace clock, ns).</summary>
    public long FirstSeen(int id) => EntryOf(id).FirstSeen;

    private ref Entry EntryOf(int id)
    {
        if (id <= 0 || id > Count) throw new ArgumentOutOfRangeException(nameof(id), id, "no such stack");
        return ref _entries[id];
    }

    /// <summary>Stores <paramref name="frames"/> after the others; returns where they start.</summary>
    private int Append(ReadOnlySpan<ulong> frames)
    {
        if (_frameCount + frames.Length > _frames.Length)
            Array.Resize(ref _frames, Math.Max(_frames.Length * 2, _frameCount + frames.Length));
        frames.CopyTo(_frames.AsSpan(_frameCount));
        var start = _frameCount;
        _frameCount += frames.Length;
        return start;
    }

    private int Add(int process, long time, ReadOnlySpan<ulong> frames, int kernelFrames, int hash, int generation)
    {
        var start = Append(frames);
        var id = ++Count;
        if (id >= _entries.Length) Array.Resize(ref _entries, _entries.Length * 2);
        _entries[id] = new Entry
        {
            Start = start,
            Length = frames.Length,
            KernelFrames = kernelFrames,
            Process = process,
            FirstSeen = time,
            Hash = hash,
            Generation = generation,
        };
        return id;
    }

    private void Rehash()
    {
        var slots = new int[_slots.Length * 2];
        var mask = slots.Length - 1;
        for (var id = 1; id <= Count; id++)
        {
            if (_entries[id].Hash < 0) continue; // reserved: looked up by its own id only
            var slot = (_entries[id].Hash & int.MaxValue) & mask;
            while (slots[slot] != 0) slot = (slot + 1) & mask;
            slots[slot] = id;
        }

        _slots = slots;
    }

    private static int Hash(int process, ReadOnlySpan<ulong> frames, int kernelFrames)
    {
        var h = new HashCode();
        h.Add(process);
        h.Add(kernelFrames);
        h.AddBytes(MemoryMarshal.AsBytes(frames));
        return h.ToHashCode() & int.MaxValue;
    }
}
