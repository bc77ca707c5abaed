using System.Buffers.Binary;
using System.Text;
using TraceLab.Formats.Ftrace;

namespace TraceLab.Formats.TraceDat;

/// <summary>
/// Writes a synthetic trace.dat with many short-lived threads (a trace with 100,000 threads must not take
/// minutes or gigabytes). Every thread is forked by one of a few process leaders, woken, runs, blocks, is woken again,
/// runs and exits, so each tid appears once with switches, wakeups and a parent — the shape of a busy system that
/// starts far more threads than a machine's pid_max lets a real capture keep apart. The kernel's own event formats
/// (tracefs, or a test's copies) define the layout, so the file reads like a capture from that kernel.
/// </summary>
public static class ManyThreadsTraceDat
{
    /// <summary>Events written per thread (see <see cref="WriteThread"/>).</summary>
    public const int EventsPerThread = 10;

    /// <summary>First generated tid; leaders come first, then the threads.</summary>
    public const int FirstTid = 1000;

    private const long StartNs = 1_000_000_000;
    private const long ThreadSpanNs = 40_000;

    /// <summary>The formats a generated trace needs, from a tracefs-like directory (events/header_page, …).</summary>
    public sealed record Formats(string HeaderPage, string HeaderEvent, string Print,
        IReadOnlyList<FtraceEventFormat> Sched)
    {
        public static readonly string[] EventNames =
            ["sched_switch", "sched_waking", "sched_wakeup_new", "sched_process_fork", "sched_process_exit"];

        /// <exception cref="IOException">A format file is missing or unreadable.</exception>
        public static Formats FromTracefs(string root)
        {
            string Read(params string[] parts) => File.ReadAllText(Path.Combine([root, "events", .. parts]));
            return new Formats(Read("header_page"), Read("header_event"), Read("ftrace", "print", "format"),
                EventNames.Select(n => FtraceEventFormat.Parse(Read("sched", n, "format"), "sched")).ToList());
        }
    }

    /// <summary>Writes <paramref name="threads"/> threads of <paramref name="processes"/> processes, 2 CPUs.</summary>
    /// <returns>The number of events written.</returns>
    public static long Write(string path, Formats formats, int threads, int processes)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(threads, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(processes, 2);
        const int cpus = 2;
        var layout = HeaderPageLayout.Parse(formats.HeaderPage);
        var raw = Enumerable.Range(0, cpus).Select(c => $"{path}.cpu{c}.raw").ToArray();
        // Never replaces anything: the trace and its scratch files must all be new.
        foreach (var f in raw.Prepend(path))
            if (File.Exists(f)) throw new IOException($"{f} already exists");
        var created = new List<string>();
        long events = 0;
        try
        {
            for (var cpu = 0; cpu < cpus; cpu++)
            {
                using var pages = new PageWriter(raw[cpu], layout);
                created.Add(raw[cpu]);
                var writer = new EventWriter(formats, pages);
                // Leaders with tid % cpus == cpu run on this CPU only, so no task runs on two CPUs at once.
                var leaders = Enumerable.Range(0, processes).Where(k => k % cpus == cpu)
                    .Select(k => FirstTid + k).ToArray();
                var t = StartNs + cpu * 7_000;
                var n = 0;
                for (var i = cpu; i < threads; i += cpus, n++, t += ThreadSpanNs)
                    events += WriteThread(writer, t, cpu, leaders[n % leaders.Length], FirstTid + processes + i);
            }

            var contents = new TraceDatContents { HeaderPage = formats.HeaderPage, HeaderEvent = formats.HeaderEvent };
            contents.FtraceFormats.Add(formats.Print);
            foreach (var f in formats.Sched) contents.AddEventFormat("sched", f.Text);
            contents.CpuDataFiles.AddRange(raw);
            TraceDatWriter.Write(path, contents);
            return events;
        }
        finally
        {
            foreach (var f in created) File.Delete(f);
        }
    }

    /// <summary>
    /// Idle wakes and switches to the leader, which forks and wakes the thread and blocks; the thread runs 10 µs,
    /// blocks, is woken 10 µs later, runs 10 µs and exits (<see cref="EventsPerThread"/> events).
    /// </summary>
    private static int WriteThread(EventWriter w, long t, int cpu, int leader, int tid)
    {
        var name = $"w{tid}";
        var lead = $"lead{leader}";
        w.Waking(t, 0, leader, lead, cpu);
        w.Switch(t + 500, "swapper", 0, 0, lead, leader);
        w.Fork(t + 1_000, leader, lead, tid, name);
        w.WakeupNew(t + 1_500, leader, tid, name, cpu);
        w.Switch(t + 2_000, lead, leader, 1, name, tid);
        w.Switch(t + 12_000, name, tid, 1, "swapper", 0);
        w.Waking(t + 22_000, 0, tid, name, cpu);
        w.Switch(t + 22_500, "swapper", 0, 0, name, tid);
        w.Exit(t + 32_000, tid, name);
        w.Switch(t + 32_500, name, tid, 0x10, "swapper", 0);
        return EventsPerThread;
    }

    /// <summary>Payloads laid out by the kernel's formats (fixed fields, char arrays and __data_loc strings).</summary>
    private sealed class EventWriter(Formats formats, PageWriter pages)
    {
        private readonly FtraceEventFormat _switch = Find(formats, "sched_switch");
        private readonly FtraceEventFormat _waking = Find(formats, "sched_waking");
        private readonly FtraceEventFormat _wakeupNew = Find(formats, "sched_wakeup_new");
        private readonly FtraceEventFormat _fork = Find(formats, "sched_process_fork");
        private readonly FtraceEventFormat _exit = Find(formats, "sched_process_exit");
        private readonly byte[] _buffer = new byte[256];

        private static FtraceEventFormat Find(Formats f, string name) => f.Sched.First(x => x.Name == name);

        public void Switch(long t, string prevComm, int prev, long prevState, string nextComm, int next) =>
            Emit(t, _switch, prev, (p, s) => p.Str(s, "prev_comm", prevComm).Int(s, "prev_pid", prev)
                .Int(s, "prev_prio", 120).Int(s, "prev_state", prevState).Str(s, "next_comm", nextComm)
                .Int(s, "next_pid", next).Int(s, "next_prio", 120));

        public void Waking(long t, int by, int tid, string comm, int cpu) =>
            Emit(t, _waking, by, (p, s) => p.Str(s, "comm", comm).Int(s, "pid", tid).Int(s, "prio", 120)
                .Int(s, "target_cpu", cpu));

        public void WakeupNew(long t, int by, int tid, string comm, int cpu) =>
            Emit(t, _wakeupNew, by, (p, s) => p.Str(s, "comm", comm).Int(s, "pid", tid).Int(s, "prio", 120)
                .Int(s, "target_cpu", cpu));

        public void Fork(long t, int parent, string parentComm, int child, string childComm) =>
            Emit(t, _fork, parent, (p, s) => p.Str(s, "parent_comm", parentComm).Int(s, "parent_pid", parent)
                .Str(s, "child_comm", childComm).Int(s, "child_pid", child));

        public void Exit(long t, int tid, string comm) =>
            Emit(t, _exit, tid, (p, s) => p.Str(s, "comm", comm).Int(s, "pid", tid).Int(s, "prio", 120));

        private void Emit(long t, FtraceEventFormat f, int commonPid, Action<Payload, byte[]> fill)
        {
            var fixedSize = f.Fields.Max(x => x.Offset + x.Size);
            Array.Clear(_buffer);
            var payload = new Payload(f, fixedSize);
            payload.Int(_buffer, "common_type", f.Id).Int(_buffer, "common_pid", commonPid);
            fill(payload, _buffer);
            pages.Add(t, _buffer.AsSpan(0, payload.Length));
        }
    }

    private sealed class Payload(FtraceEventFormat f, int fixedSize)
    {
        public int Length { get; private set; } = fixedSize;

        public Payload Int(byte[] b, string name, long value)
        {
            if (f.Field(name) is not { } field) return this;
            var s = b.AsSpan(field.Offset, field.Size);
            switch (field.Size)
            {
                case 1: s[0] = (byte)value; break;
                case 2: BinaryPrimitives.WriteInt16LittleEndian(s, (short)value); break;
                case 4: BinaryPrimitives.WriteInt32LittleEndian(s, (int)value); break;
                case 8: BinaryPrimitives.WriteInt64LittleEndian(s, value); break;
                default: throw new InvalidDataException($"{f.Name}.{name}: integer of {field.Size} bytes");
            }

            return this;
        }

        /// <summary>A char[N] field, or a __data_loc string appended after the fixed fields.</summary>
        public Payload Str(byte[] b, string name, string value)
        {
            if (f.Field(name) is not { } field) return this;
            var bytes = Encoding.ASCII.GetBytes(value);
            if (!field.IsDynamic)
            {
                bytes.AsSpan(0, Math.Min(bytes.Length, field.Size - 1)).CopyTo(b.AsSpan(field.Offset));
                return this;
            }

            // __rel_loc counts from the end of its own 4 bytes.
            var at = Length;
            var offset = field.IsRelative ? at - (field.Offset + 4) : at;
            bytes.CopyTo(b.AsSpan(at));
            BinaryPrimitives.WriteUInt32LittleEndian(b.AsSpan(field.Offset), (uint)((bytes.Length + 1) << 16 | offset));
            Length = at + bytes.Length + 1;
            return this;
        }
    }

    /// <summary>Ring-buffer pages as the kernel writes them: 4-byte record headers with 27-bit time deltas.</summary>
    private sealed class PageWriter : IDisposable
    {
        private readonly FileStream _file;
        private readonly HeaderPageLayout _layout;
        private readonly byte[] _page;
        private int _pos;
        private long _last;

        public PageWriter(string path, HeaderPageLayout layout)
        {
            _file = new FileStream(path, FileMode.CreateNew, FileAccess.Write, FileShare.None, 1 << 16);
            _layout = layout;
            _page = new byte[layout.PageSize];
            _pos = -1;
        }

        public void Add(long t, ReadOnlySpan<byte> payload)
        {
            var words = (payload.Length + 3) / 4;
            if (words > 28) throw new InvalidDataException($"payload of {payload.Length} bytes needs a length word");
            if (_pos < 0 || _pos + 4 + words * 4 > _layout.DataOffset + _layout.DataSize) Start(t);
            var delta = (uint)(t - _last);
            BinaryPrimitives.WriteUInt32LittleEndian(_page.AsSpan(_pos), (delta << 5) | (uint)words);
            payload.CopyTo(_page.AsSpan(_pos + 4));
            _pos += 4 + words * 4;
            _last = t;
        }

        private void Start(long t)
        {
            Flush();
            Array.Clear(_page);
            BinaryPrimitives.WriteUInt64LittleEndian(_page.AsSpan(_layout.TimestampOffset), (ulong)t);
            _pos = _layout.DataOffset;
            _last = t;
        }

        private void Flush()
        {
            if (_pos < 0) return;
            var commit = (ulong)(_pos - _layout.DataOffset);
            var at = _page.AsSpan(_layout.CommitOffset);
            if (_layout.CommitSize == 8) BinaryPrimitives.WriteUInt64LittleEndian(at, commit);
            else BinaryPrimitives.WriteUInt32LittleEndian(at, (uint)commit);
            _file.Write(_page);
        }

        public void Dispose()
        {
            Flush();
            _file.Dispose();
        }
    }
}
