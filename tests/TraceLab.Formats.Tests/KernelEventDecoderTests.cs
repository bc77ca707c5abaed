using System.Buffers.Binary;
using System.Text;
using TraceLab.Core;
using TraceLab.Formats.Ftrace;

namespace TraceLab.Formats.Tests;

public class KernelEventDecoderTests
{
    private readonly ThreadTable _threads = new();
    private readonly KernelEventDecoder _decoder;
    private readonly Dictionary<string, FtraceEventFormat> _formats;

    public KernelEventDecoderTests()
    {
        var all = TestData.AllFormats().Select(f => FtraceEventFormat.Parse(f.Text, f.System)).ToList();
        _formats = all.ToDictionary(f => f.Name == "sys_enter" || f.Name == "sys_exit" ? "raw_" + f.Name : f.Name);
        _decoder = new KernelEventDecoder(all, _threads);
    }

    internal static byte[] Payload(FtraceEventFormat f, int pid, Action<Writer> fill, int extra = 0)
    {
        var size = f.Fields.Max(x => x.Offset + x.Size) + extra;
        var w = new Writer(f, new byte[size]);
        w.Int("common_type", f.Id);
        w.Int("common_pid", pid);
        fill(w);
        return w.Bytes;
    }

    internal sealed class Writer(FtraceEventFormat f, byte[] bytes)
    {
        public byte[] Bytes { get; private set; } = bytes;

        public Writer Int(string name, long value)
        {
            var field = f.Field(name)!;
            var s = Bytes.AsSpan(field.Offset, field.Size);
            switch (field.Size)
            {
                case 2: BinaryPrimitives.WriteInt16LittleEndian(s, (short)value); break;
                case 4: BinaryPrimitives.WriteInt32LittleEndian(s, (int)value); break;
                case 8: BinaryPrimitives.WriteInt64LittleEndian(s, value); break;
                default: throw new InvalidOperationException();
            }

            return this;
        }

        public Writer Comm(string name, string value)
        {
            var field = f.Field(name)!;
            if (field.IsDynamic) return DataLoc(name, value);
            Encoding.ASCII.GetBytes(value).CopyTo(Bytes, field.Offset);
            return this;
        }

        public Writer At(int offset, long value)
        {
            BinaryPrimitives.WriteInt64LittleEndian(Bytes.AsSpan(offset), value);
            return this;
        }

        public Writer Tail(string text)
        {
            var field = f.Field("buf")!;
            var b = Encoding.UTF8.GetBytes(text + "\0");
            Bytes = Bytes.Take(field.Offset).Concat(b).ToArray();
            return this;
        }

        public Writer DataLoc(string name, string text)
        {
            var field = f.Field(name)!;
            var b = Encoding.UTF8.GetBytes(text + "\0");
            var start = Bytes.Length;
            Bytes = Bytes.Concat(b).ToArray();
            BinaryPrimitives.WriteUInt32LittleEndian(Bytes.AsSpan(field.Offset), (uint)((b.Length << 16) | start));
            return this;
        }
    }

    /// <summary>
    /// The common fields read where every kernel puts them (Decode's and Check's direct reads) and read through their
    /// format (a layout that is not the usual one: common_type declared signed) give the same events and the same
    /// answers, for random payloads of every event type, short ones included.
    /// </summary>
    [Fact]
    public void Common_fields_read_directly_or_through_their_format_give_the_same_events()
    {
        const string Usual = "common_type;\toffset:0;\tsize:2;\tsigned:0;";
        var usual = TestData.AllFormats().Select(f => FtraceEventFormat.Parse(f.Text, f.System)).ToList();
        var declared = TestData.AllFormats()
            .Select(f => FtraceEventFormat.Parse(f.Text.Replace(Usual, Usual.Replace("signed:0", "signed:1",
                StringComparison.Ordinal), StringComparison.Ordinal), f.System))
            .ToList();
        var direct = new KernelEventDecoder(usual, new ThreadTable());
        var throughFormat = new KernelEventDecoder(declared, new ThreadTable());
        Assert.True(direct.ReadsCommonFieldsDirectly);
        Assert.False(throughFormat.ReadsCommonFieldsDirectly);
        var random = new Random(23);
        foreach (var f in usual)
        {
            var end = f.Fields.Max(x => x.Offset + x.Size);
            for (var i = 0; i < 300; i++)
            {
                var bytes = new byte[random.Next(0, end + 16)];
                random.NextBytes(bytes);
                if (bytes.Length >= 2) BinaryPrimitives.WriteUInt16LittleEndian(bytes, (ushort)f.Id);
                Assert.Equal(throughFormat.Check(bytes, i), direct.Check(bytes, i));
                KernelEvent a = default, b = default;
                Assert.Equal(throughFormat.Decode(bytes, i, 3, ref b), direct.Decode(bytes, i, 3, ref a));
                Assert.Equal(b, a);
            }
        }

        Assert.Equal(throughFormat.UnknownEventCount, direct.UnknownEventCount);
    }

    [Fact]
    public void A_task_newtask_format_without_clone_flags_leaves_the_kind_unknown()
    {
        var text = TestData.Resource("task_task_newtask.format").Replace("clone_flags", "other_flags");
        var f = FtraceEventFormat.Parse(text, "task");
        var decoder = new KernelEventDecoder([f], new ThreadTable());
        var e = default(KernelEvent);
        Assert.True(decoder.Decode(Payload(f, 5, w => w.Int("pid", 8).Int("other_flags", 0x11)), 1, 0, ref e));
        Assert.Equal((KernelEventKind.Fork, 8, ForkChild.Unknown), (e.Kind, e.ChildTid, e.ChildKind));
    }

    /// <summary>Damaged task_newtask payloads (every length up to past the record, random bytes): no exception,
    /// and a payload too short for pid and clone_flags is refused, never read past its end.</summary>
    [Fact]
    public void Damaged_task_newtask_payloads_are_refused_or_decoded_never_thrown()
    {
        var f = _formats["task_newtask"];
        var end = f.Field("clone_flags")!.Offset + 8;
        var random = new Random(19);
        var refused = 0;
        for (var i = 0; i < 5000; i++)
        {
            var bytes = new byte[random.Next(0, end + 16)];
            random.NextBytes(bytes);
            if (bytes.Length >= 2) BinaryPrimitives.WriteUInt16LittleEndian(bytes, (ushort)f.Id);
            var e = default(KernelEvent);
            var ok = _decoder.Decode(bytes, 1, 0, ref e);
            if (bytes.Length >= 2 && bytes.Length < f.Field("comm")!.Offset + 16) Assert.False(ok);
            if (!ok) refused++;
            else if (bytes.Length >= 2) Assert.Equal(KernelEventKind.Fork, e.Kind);
        }
        Assert.InRange(refused, 1, 4999);
    }

    private KernelEvent Decode(byte[] payload, long ts = 100, int cpu = 1)
    {
        var e = new KernelEvent();
        Assert.True(_decoder.Decode(payload, ts, cpu, ref e));
        return e;
    }

    [Fact]
    public void DecodesSwitchAndUpdatesNames()
    {
        var f = _formats["sched_switch"];
        var e = Decode(Payload(
            f, 10, w => w.Comm("prev_comm", "worker").Int("prev_pid", 10).Int("prev_prio", 120).Int("prev_state", 0x102)
            .Comm("next_comm", "other").Int("next_pid", 20).Int("next_prio", 100)));

        Assert.Equal(KernelEventKind.Switch, e.Kind);
        Assert.Equal((100L, 1, 10), (e.Timestamp, e.Cpu, e.CurrentTid));
        Assert.Equal((10, 120, 0x102L, 20, 100), (e.PrevTid, e.PrevPrio, e.PrevState, e.NextTid, e.NextPrio));
        Assert.Equal("worker", _threads.NameOf(10));
        Assert.Equal("other", _threads.NameOf(20));
    }

    [Fact]
    public void DecodesWakingMigrateForkExit()
    {
        var waking = Decode(Payload(
            _formats["sched_waking"], 5, w => w.Comm("comm", "t").Int("pid", 7).Int("prio", 120).Int("target_cpu", 1)));
        Assert.Equal(
            (KernelEventKind.Waking, 5, 7, 1), (waking.Kind, waking.CurrentTid, waking.WokenTid, waking.TargetCpu));

        // sched_waking exists, so sched_wakeup is not a second Waking.
        var wakeup = Decode(Payload(_formats["sched_wakeup"], 5, w => w.Int("pid", 7)));
        Assert.Equal(KernelEventKind.Other, wakeup.Kind);

        var wnew = Decode(Payload(_formats["sched_wakeup_new"], 5, w => w.Int("pid", 8).Int("target_cpu", 0)));
        Assert.Equal((KernelEventKind.WakeupNew, 8, 0), (wnew.Kind, wnew.WokenTid, wnew.TargetCpu));

        var mig = Decode(
            Payload(_formats["sched_migrate_task"], 5, w => w.Int("pid", 9).Int("orig_cpu", 0).Int("dest_cpu", 1)));
        Assert.Equal((KernelEventKind.Migrate, 9, 0, 1), (mig.Kind, mig.Tid, mig.OrigCpu, mig.DestCpu));

        var fork = Decode(Payload(_formats["sched_process_fork"], 5,
            w => w.Comm("parent_comm", "p").Int("parent_pid", 5).Comm("child_comm", "c").Int("child_pid", 6)));
        Assert.Equal((KernelEventKind.Fork, 5, 6), (fork.Kind, fork.ParentTid, fork.ChildTid));
        Assert.Equal("c", _threads.NameOf(6));

        // task_newtask: the creator is common_pid; clone flags as glibc passes them for pthread_create and fork.
        var thread = Decode(Payload(_formats["task_newtask"], 5, w => w.Int("pid", 7).Comm("comm", "t")
            .Int("clone_flags", 0x3d0f00)));
        Assert.Equal((KernelEventKind.Fork, 5, 7, ForkChild.Thread),
            (thread.Kind, thread.ParentTid, thread.ChildTid, thread.ChildKind));
        Assert.Equal("t", _threads.NameOf(7));
        var process = Decode(Payload(_formats["task_newtask"], 5, w => w.Int("pid", 8).Comm("comm", "c")
            .Int("clone_flags", 0x1200011)));
        Assert.Equal((KernelEventKind.Fork, 5, 8, ForkChild.Process),
            (process.Kind, process.ParentTid, process.ChildTid, process.ChildKind));
        Assert.Equal(ForkChild.Unknown, fork.ChildKind);

        var exit = Decode(Payload(_formats["sched_process_exit"], 6, w => w.Comm("comm", "c").Int("pid", 6)));
        Assert.Equal((KernelEventKind.Exit, 6), (exit.Kind, exit.Tid));
    }

    [Fact]
    public void WakeupCountsAsWakingWhenWakingIsAbsent()
    {
        var formats = TestData.AllFormats().Select(f => FtraceEventFormat.Parse(f.Text, f.System))
            .Where(f => f.Name != "sched_waking").ToList();
        var decoder = new KernelEventDecoder(formats, new ThreadTable());
        var e = new KernelEvent();
        Assert.True(decoder.Decode(
            Payload(_formats["sched_wakeup"], 5, w => w.Int("pid", 7).Int("target_cpu", 1)), 1, 0, ref e));
        Assert.Equal(KernelEventKind.Waking, e.Kind);
    }

    [Fact]
    public void DecodesExecFileName()
    {
        var e = Decode(Payload(_formats["sched_process_exec"], 44,
            w => w.Int("pid", 44).Int("old_pid", 44).DataLoc("filename", "/usr/bin/true")));
        Assert.Equal(KernelEventKind.Exec, e.Kind);
        Assert.Equal("/usr/bin/true", e.Text);
    }

    [Fact]
    public void DecodesSyscalls()
    {
        var enter = _formats["sys_enter_futex"];
        var args = enter.EventFields.Where(x => x.Name != "__syscall_nr").ToList();
        var e = Decode(Payload(enter, 3, w => w.Int("__syscall_nr", 202).At(args[0].Offset, 0x1000)
            .At(args[1].Offset, 128).At(args[2].Offset, 1).At(args[3].Offset, 0).At(args[4].Offset, 99)));
        Assert.Equal((KernelEventKind.SyscallEnter, 202, 0x1000L, 128L, 1L, 0L),
            (e.Kind, e.SyscallNr, e.Arg0, e.Arg1, e.Arg2, e.Arg3));

        var x = Decode(Payload(_formats["sys_exit_futex"], 3, w => w.Int("__syscall_nr", 202).Int("ret", -110)));
        Assert.Equal((KernelEventKind.SyscallExit, 202, -110L), (x.Kind, x.SyscallNr, x.Ret));

        var raw = _formats["raw_sys_enter"];
        var argOff = raw.Field("args")!.Offset;
        var r = Decode(Payload(
            raw, 3, w => w.Int("id", 230).At(argOff, 1).At(argOff + 8, 2).At(argOff + 16, 3).At(argOff + 24, 4)));
        Assert.Equal(
            (KernelEventKind.SyscallEnter, 230, 1L, 2L, 3L, 4L), (r.Kind, r.SyscallNr, r.Arg0, r.Arg1, r.Arg2, r.Arg3));

        var rx = Decode(Payload(_formats["raw_sys_exit"], 3, w => w.Int("id", 230).Int("ret", 0)));
        Assert.Equal((KernelEventKind.SyscallExit, 230, 0L), (rx.Kind, rx.SyscallNr, rx.Ret));
    }

    [Fact]
    public void MarkersAreTrimmedAndInterned()
    {
        var f = _formats["print"];
        var a = Decode(Payload(f, 77, w => w.Tail("lock acquired\n")));
        var b = Decode(Payload(f, 77, w => w.Tail("lock acquired\n")));
        Assert.Equal(KernelEventKind.Marker, a.Kind);
        Assert.Equal("lock acquired", a.Text);
        Assert.Same(a.Text, b.Text);
        Assert.Equal(1, _decoder.InternedMarkerCount);
    }

    [Fact]
    public void UnknownAndOtherEventsKeepCommonFields()
    {
        var bytes = new byte[8];
        BinaryPrimitives.WriteUInt16LittleEndian(bytes, 60000);
        BinaryPrimitives.WriteInt32LittleEndian(bytes.AsSpan(4), 12);
        var e = Decode(bytes);
        Assert.Equal((KernelEventKind.Other, 12), (e.Kind, e.CurrentTid));
    }

    [Fact]
    public void TruncatedPayloadIsRejected()
    {
        var full = Payload(_formats["sched_switch"], 1, _ => { });
        var e = new KernelEvent();
        Assert.False(_decoder.Decode(full.AsSpan(0, 20), 0, 0, ref e));
        Assert.False(_decoder.Decode(full.AsSpan(0, 3), 0, 0, ref e));
    }

    [Fact]
    public void SwitchDecodingDoesNotAllocate()
    {
        var payload = Payload(_formats["sched_switch"], 10,
            w => w.Comm("prev_comm", "a").Int("prev_pid", 10).Comm("next_comm", "b").Int("next_pid", 20));
        var marker = Payload(_formats["print"], 10, w => w.Tail("m\n"));
        var e = new KernelEvent();
        var bytes = Allocations.FewestBytesPerRound(() =>
        {
            for (var i = 0; i < 1000; i++)
            {
                _decoder.Decode(payload, i, 0, ref e);
                _decoder.Decode(marker, i, 0, ref e);
            }
        });

        Assert.Equal(0, bytes);
    }
}
