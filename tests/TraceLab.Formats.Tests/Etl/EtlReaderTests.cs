using System.Buffers.Binary;
using System.Text;
using TraceLab.Core;
using TraceLab.Formats.Etl;
using TraceLab.Formats.Etw;
using TraceLab.Formats.Registry;
using TraceLab.Formats.TraceDat;
using static TraceLab.Formats.Tests.Etl.EtlTestWriter;
using static TraceLab.Formats.Tests.Etw.EtwPayloads;

namespace TraceLab.Formats.Tests.Etl;

/// <summary>
/// Complete .etl files built by <see cref="EtlTestWriter"/> from the documented layouts, read back through
/// <see cref="EtlFileReader"/>: a two-CPU convoy of CSwitch and ReadyThread events whose answers are known.
/// </summary>
public sealed class EtlReaderTests : IDisposable
{
    private const int Pid = 4000, A = 4100, B = 4200, C = 4300;
    private const ushort CSwitchHook = 0x0524, ReadyThreadHook = 0x0532, ThreadDCStartHook = 0x0503;
    private const ushort SetNameHook = 0x0548, ProcessDCStartHook = 0x0303, SysClEnterHook = 0x0F33,
        SysClExitHook = 0x0F34;
    private const byte UserMode = 1;

    private readonly TempDirectory _dir = new("etl");

    public void Dispose() => _dir.Dispose();

    private sealed class ListSink : IKernelEventSink
    {
        public List<KernelEvent> Events { get; } = [];
        public void OnEvent(in KernelEvent e) => Events.Add(e);
    }

    /// <summary>
    /// CPU 0: A runs, blocks on B's lock (UserRequest); CPU 1: B runs, readies A, is preempted. Thread rundown names
    /// the threads; a process rundown names the process. Enough events to fill several 1 KiB buffers per CPU.
    /// </summary>
    internal static EtlTestWriter Convoy(EtlTestWriter w, int pointerSize = 8, int rounds = 40)
    {
        w.Add(0, SystemEvent(pointerSize, ProcessDCStartHook, 4, 0, Pid, Raw(100), Process(pointerSize, Pid,
            "convoy.exe")));
        w.Add(0, SystemEvent(pointerSize, ThreadDCStartHook, 3, A, Pid, Raw(200), Thread(pointerSize, Pid, A,
            "worker-a")));
        w.Add(0, SystemEvent(pointerSize, ThreadDCStartHook, 3, B, Pid, Raw(300), Thread(pointerSize, Pid, B,
            "worker-b")));
        w.Add(1, SystemEvent(pointerSize, ThreadDCStartHook, 3, C, Pid, Raw(400), Thread(pointerSize, Pid, C, "")));
        for (var i = 0; i < rounds; i++)
        {
            var t = 10_000 + i * 10_000L;
            // Times interleave across CPUs, so the merge has to alternate between the two streams.
            w.Add(0, PerfInfo(pointerSize, CSwitchHook, 2, Raw(t), CSwitch(A, 0, 10, 0, 0, 0, KThreadState.Ready)));
            w.Add(1, PerfInfo(pointerSize, CSwitchHook, 2, Raw(t + 1_000), CSwitch(B, C, 12, 8,
                (byte)KWaitReason.WrPreempted, 0, KThreadState.Ready)));
            w.Add(0, PerfInfo(pointerSize, CSwitchHook, 2, Raw(t + 2_000),
                CSwitch(0, A, 0, 10, (byte)KWaitReason.UserRequest, UserMode, KThreadState.Waiting)));
            w.Add(1, Compact(pointerSize, ReadyThreadHook, 2, B, Pid, Raw(t + 3_000), ReadyThread(A)));
            w.Add(1, PerfInfo(pointerSize, CSwitchHook, 2, Raw(t + 4_000),
                CSwitch(C, B, 8, 12, (byte)KWaitReason.WrPreempted, 0, KThreadState.Ready)));
        }

        return w;
    }

    private string Write(EtlTestWriter w, string name = "t.etl")
    {
        var path = _dir.File(name);
        File.WriteAllBytes(path, w.Build());
        return path;
    }

    private static (EtlFileReader Reader, List<KernelEvent> Events) Read(string path, bool salvage = false)
    {
        var reader = EtlFileReader.Open(path, new TraceReadOptions { Salvage = salvage });
        var sink = new ListSink();
        reader.Read(sink);
        return (reader, sink.Events);
    }

    [Fact]
    public void CSwitch_and_ReadyThread_decode_inside_complete_buffers_merged_in_time_order()
    {
        var (reader, events) = Read(Write(Convoy(new EtlTestWriter())));
        using var _ = reader;

        var switches = events.Where(e => e.Kind == KernelEventKind.Switch).ToList();
        Assert.Equal(40 * 4, switches.Count);
        Assert.True(reader.Buffers > 6, $"the convoy should span several buffers per CPU, got {reader.Buffers}");
        Assert.Equal(events.OrderBy(e => e.Timestamp).Select(e => e.Timestamp), events.Select(e => e.Timestamp));

        var block = switches.First(e => e.PrevTid == A);
        Assert.Equal(10_000 + 2_000, block.Timestamp);
        Assert.Equal(0, block.Cpu);
        Assert.Equal(0, block.NextTid);
        Assert.Equal(TaskState.Interruptible, block.PrevState);
        Assert.Equal((int)KWaitReason.UserRequest, block.PrevWaitReason);
        Assert.Equal(10, block.PrevPrio);

        var preempt = switches.First(e => e.PrevTid == B);
        Assert.Equal(1, preempt.Cpu);
        Assert.Equal(C, preempt.NextTid);
        Assert.Equal(TaskState.Running, preempt.PrevState);
        Assert.Equal(12, preempt.PrevPrio);
        Assert.Equal(8, preempt.NextPrio);

        var wake = events.First(e => e.Kind == KernelEventKind.Waking);
        Assert.Equal(13_000, wake.Timestamp);
        Assert.Equal(B, wake.CurrentTid);
        Assert.Equal(A, wake.WokenTid);
        Assert.Equal(1, wake.Cpu);
        Assert.Equal(40, events.Count(e => e.Kind == KernelEventKind.Waking));
    }

    [Fact]
    public void Thread_and_process_rundown_name_the_threads()
    {
        var (reader, events) = Read(Write(Convoy(new EtlTestWriter())));
        using var _ = reader;

        Assert.Equal("worker-a", reader.Threads.NameOf(A));
        Assert.Equal("worker-b", reader.Threads.NameOf(B));
        Assert.Equal("convoy.exe", reader.Threads.NameOf(C)); // no name of its own: its process's image
        Assert.Equal("convoy.exe", reader.Processes.Images[Pid]);
        Assert.Equal(Pid, reader.Processes.Processes[C]);
        Assert.Equal(3, events.Count(e => e.Kind == KernelEventKind.Fork && e.ParentTid == Pid));
    }

    [Fact]
    public void Compressed_buffers_read_the_same_as_plain_ones()
    {
        var (plainReader, plain) = Read(Write(Convoy(new EtlTestWriter()), "plain.etl"));
        var (packedReader, packed) = Read(Write(Convoy(new EtlTestWriter { Compress = _ => true }), "packed.etl"));
        using var _ = plainReader;
        using var __ = packedReader;

        Assert.True(new FileInfo(_dir.File("packed.etl")).Length < new FileInfo(_dir.File("plain.etl")).Length);
        Assert.Equal(plain.Count, packed.Count);
        Assert.Equal(plain.Select(e => e.ToString()), packed.Select(e => e.ToString()));
        Assert.Equal(plainReader.Threads.Names, packedReader.Threads.Names);
    }

    [Fact]
    public void A_32_bit_trace_reads_its_pointer_sized_layouts()
    {
        var (reader, events) = Read(Write(Convoy(new EtlTestWriter { PointerSize = 4 }, pointerSize: 4)));
        using var _ = reader;

        Assert.Equal(4, reader.Header.PointerSize);
        Assert.Equal("worker-a", reader.Threads.NameOf(A));
        Assert.Equal("convoy.exe", reader.Processes.Images[Pid]);
        Assert.Equal(160, events.Count(e => e.Kind == KernelEventKind.Switch));
    }

    [Fact]
    public void Logfile_header_fills_trace_info_and_losses_are_reported()
    {
        var w = Convoy(new EtlTestWriter
        {
            EventsLost = 5,
            BuffersLost = 2,
            Cpus = 4,
            ExtraFlags = cpu => cpu == 1 ? (ushort)0x2 : (ushort)0
        });
        var (reader, _) = Read(Write(w));
        using var r = reader;

        Assert.Equal(4, reader.Info.CpuCount);
        Assert.Equal("qpc", reader.Info.TraceClock);
        Assert.Equal("Windows 10.0.19041", reader.Info.KernelRelease);
        Assert.Equal([5L], reader.Info.LostEventsPerCpu!);
        Assert.NotNull(reader.Info.PagesWithMissedEvents);
        Assert.Equal(0, reader.Info.PagesWithMissedEvents![0]);
        Assert.True(reader.Info.PagesWithMissedEvents[1] > 0);
        Assert.Contains("lost 2 whole buffers", reader.Info.Damage, StringComparison.Ordinal);
        Assert.Equal("TraceLab Test Logger", reader.Header.LoggerName);
        Assert.Equal(EtlTestWriter.PerfFreq, reader.Header.PerfFreq);
    }

    [Fact]
    public void An_implausible_processor_count_is_replaced_by_the_cpus_that_logged()
    {
        var (reader, _) = Read(Write(Convoy(new EtlTestWriter { Cpus = 1_000_000 })));
        using var r = reader;

        Assert.Equal(2, reader.Info.CpuCount);
    }

    [Fact]
    public void Pmc_counters_after_a_kernel_header_are_skipped_before_the_payload()
    {
        var w = new EtlTestWriter()
            .Add(0, PerfInfo(8, CSwitchHook, 2, Raw(1_000), CSwitch(A, B, 9, 8, (byte)KWaitReason.WrQueue, 0,
                KThreadState.Waiting), pmcCounters: 2));
        var (reader, events) = Read(Write(w));
        using var _ = reader;

        var sw = Assert.Single(events, e => e.Kind == KernelEventKind.Switch);
        Assert.Equal(B, sw.PrevTid);
        Assert.Equal(A, sw.NextTid);
        Assert.Equal((int)KWaitReason.WrQueue, sw.PrevWaitReason);
    }

    [Fact]
    public void Markers_syscalls_set_name_classic_instance_and_wpp_records_are_read_from_every_header_kind()
    {
        var marker = Encoding.Unicode.GetBytes("TRACELAB_REGION_BEGIN\0");
        var w = new EtlTestWriter()
            .Add(0, WithEventHeader(8, WorkloadMarkers.ProviderGuid, 0, 0, 0, A, Pid, Raw(1_000), marker, (2,
                new byte[28]), (12, new byte[9])))
            .Add(0, Compact(8, SysClEnterHook, 2, A, Pid, Raw(2_000), SysClEnter(8, 0xFFFFF80012345678)))
            .Add(0, SystemEvent(8, SysClExitHook, 2, A, Pid, Raw(3_000), SysClExit(0xC0000022)))
            .Add(1, PerfInfo(8, SetNameHook, 2, Raw(4_000), SetName(Pid, B, "renamed")))
            .Add(1, Full(8, Guid.NewGuid(), 10, 2, B, Pid, Raw(5_000), new byte[13]))
            .Add(1, Instance(8, Guid.NewGuid(), 11, 2, B, Pid, Raw(6_000), new byte[5]))
            .Add(1, Message(new byte[11]))
            .Add(1, PerfInfo(8, CSwitchHook, 2, Raw(7_000), CSwitch(A, B, 9, 8, 6, 1, KThreadState.Waiting)));
        var (reader, events) = Read(Write(w));
        using var _ = reader;

        Assert.Equal([KernelEventKind.Other, KernelEventKind.Marker, KernelEventKind.SyscallEnter,
            KernelEventKind.SyscallExit,
            KernelEventKind.Other, KernelEventKind.Other, KernelEventKind.Other, KernelEventKind.Other,
                KernelEventKind.Switch],
            events.Select(e => e.Kind));
        Assert.Equal("TRACELAB_REGION_BEGIN", events[1].Text);
        Assert.Equal(A, events[1].CurrentTid);
        Assert.Equal(unchecked((long)0xFFFFF80012345678), events[2].Arg0);
        Assert.Equal(unchecked((int)0xC0000022), events[3].Ret);
        Assert.Equal("renamed", reader.Threads.NameOf(B));
        Assert.Equal(5_000, events[5].Timestamp);
        Assert.Equal(6_000, events[6].Timestamp); // instance header
        Assert.Equal(6_000, events[7].Timestamp); // a WPP message has no time stamp here: its CPU's last one
        Assert.Equal(A, events[8].NextTid);       // and the record after them is found by their sizes
        Assert.Equal(0, reader.Info.UnknownEvents);
    }

    /// <summary>
    /// TraceLab's own pid, written by an ETW capture as a marker provider event (EtwCaptureSession.WriteMarker),
    /// reaches the analysis as it does from tracefs: the region knows it, so reports leave TraceLab out.
    /// </summary>
    [Fact]
    public void A_self_pids_marker_event_names_TraceLabs_processes_to_the_analysis()
    {
        var marker = Encoding.Unicode.GetBytes(TraceLab.Analyzers.MeasuredRegion.SelfPidsMarker + "4242,4243\0");
        var w = new EtlTestWriter()
            .Add(0, WithEventHeader(8, WorkloadMarkers.ProviderGuid, 0, 0, 0, A, Pid, Raw(1_000), marker))
            .Add(0, PerfInfo(8, CSwitchHook, 2, Raw(7_000), CSwitch(A, B, 9, 8, 6, 1, KThreadState.Waiting)));
        using var reader = EtlFileReader.Open(Write(w));
        using var session = new TraceLab.Analyzers.AnalysisSession(TraceLab.Analyzers.AnalysisSelection.Threads,
            names: reader.Threads);
        reader.Read(session.Sink);
        session.Complete();
        Assert.Equal([4242, 4243], session.Accounting.Region.SelfPids);
    }

    [Fact]
    public void Unknown_header_kinds_and_newer_versions_are_skipped_by_size_counted_and_reported()
    {
        var w = new EtlTestWriter()
            .Add(0, PerfInfo(8, CSwitchHook, 2, Raw(1_000), CSwitch(A, B, 9, 8, 6, 1, KThreadState.Waiting)))
            .Add(0, UnknownKind(44))
            .Add(0, PerfInfo(8, CSwitchHook, 5, Raw(2_000), [.. CSwitch(B, A, 9, 8, 6, 1,
                KThreadState.Waiting), .. new byte[16]]))
            .Add(0, PerfInfo(8, CSwitchHook, 2, Raw(3_000), CSwitch(A, B, 9, 8, 6, 1, KThreadState.Waiting)));
        var (reader, events) = Read(Write(w));
        using var _ = reader;

        Assert.Equal([KernelEventKind.Other, KernelEventKind.Switch, KernelEventKind.Other,
            KernelEventKind.Other, KernelEventKind.Switch],
            events.Select(e => e.Kind));
        Assert.Equal(1, reader.UnknownHeaderEvents);
        Assert.Equal(1, reader.NewerVersionEvents);
        Assert.Equal(1, reader.Info.UnknownEvents);
        Assert.Equal(1, reader.Info.SkippedFormats);
        Assert.Equal(1_000, events[2].Timestamp); // an unknown kind has no time stamp: it keeps its CPU's last one
    }

    [Fact]
    public void A_damaged_buffer_fails_strictly_with_its_offset_and_is_skipped_when_salvaging()
    {
        var bytes = Convoy(new EtlTestWriter()).Build();
        // The second data buffer (file offset 2 × 1024, the header buffer being 1024 bytes): break its first marker.
        bytes[2048 + 0x48 + 3] = 0x12;
        var path = _dir.File("damaged.etl");
        File.WriteAllBytes(path, bytes);

        var error = Assert.Throws<TraceFormatException>(() => Read(path));
        Assert.True(error.Message.StartsWith(path + ": at offset 2120: an event record",
            StringComparison.Ordinal), error.Message);

        var (reader, events) = Read(path, salvage: true);
        using var _ = reader;
        Assert.NotNull(reader.Info.Damage);
        Assert.Contains("salvaged a damaged .etl", reader.Info.Damage, StringComparison.Ordinal);
        Assert.True(reader.Info.SkippedBytes > 0);
        Assert.InRange(events.Count(e => e.Kind == KernelEventKind.Switch), 80, 159);
    }

    [Fact]
    public void A_truncated_file_fails_strictly_and_salvages_up_to_the_cut()
    {
        var bytes = Convoy(new EtlTestWriter()).Build();
        var path = _dir.File("cut.etl");
        File.WriteAllBytes(path, bytes[..(bytes.Length - 500)]);

        var error = Assert.Throws<TraceFormatException>(() => Read(path));
        Assert.Contains("the file ends", error.Message, StringComparison.Ordinal);
        var (reader, events) = Read(path, salvage: true);
        using var _ = reader;
        Assert.Contains("buffer chain breaks", reader.Info.Damage, StringComparison.Ordinal);
        Assert.True(events.Count(e => e.Kind == KernelEventKind.Switch) > 80);
    }

    [Fact]
    public void Content_sniffing_accepts_etl_headers_only()
    {
        var etl = Convoy(new EtlTestWriter()).Build();
        Assert.True(EtlFileReader.LooksLikeEtl(etl.AsSpan(0, EtlFileReader.SniffLength)));
        Assert.False(EtlFileReader.LooksLikeEtl(etl.AsSpan(0, EtlFileReader.SniffLength - 1)));
        var perf = new byte[128];
        "PERFILE2"u8.CopyTo(perf);
        Assert.False(EtlFileReader.LooksLikeEtl(perf));
        Assert.False(EtlFileReader.LooksLikeEtl(new byte[256]));
        var second = etl.AsSpan(1024).ToArray(); // a data buffer: its first event is no logfile header
        Assert.False(EtlFileReader.LooksLikeEtl(second));

        var path = _dir.File("garbage.etl");
        File.WriteAllBytes(path, new byte[4096]);
        var error = Assert.Throws<TraceFormatException>(() => EtlFileReader.Open(path));
        Assert.True(error.Message.StartsWith(path + ": at offset 0: an ETW .etl file",
            StringComparison.Ordinal), error.Message);
    }

    [ExternalTraceFact(ExternalEtl.ShutdownLogger)]
    public void Content_sniffing_accepts_a_real_etl_file()
    {
        var head = new byte[EtlFileReader.SniffLength];
        using (var f = File.OpenRead(ExternalTraces.PathOf(ExternalEtl.ShutdownLogger))) f.ReadExactly(head);
        Assert.True(EtlFileReader.LooksLikeEtl(head));
    }

    /// <summary>Process v4 payload (x64 or x86): key, ids, session, exit status, DTB, flags, no SID, image
    /// name.</summary>
    private static byte[] Process(int pointerSize, int pid, string image)
    {
        var name = Encoding.ASCII.GetBytes(image + "\0");
        var cmdline = Encoding.Unicode.GetBytes("C:\\" + image + "\0");
        var b = new byte[2 * pointerSize + 24 + name.Length + cmdline.Length + 4];
        b.AsSpan(0, pointerSize).Fill(0xEE); // UniqueProcessKey
        BinaryPrimitives.WriteInt32LittleEndian(b.AsSpan(pointerSize), pid);
        BinaryPrimitives.WriteInt32LittleEndian(b.AsSpan(pointerSize + 4), 4);
        BinaryPrimitives.WriteInt32LittleEndian(b.AsSpan(pointerSize + 8), 1);
        BinaryPrimitives.WriteInt32LittleEndian(b.AsSpan(pointerSize + 12), 259);
        b.AsSpan(pointerSize + 16, pointerSize).Fill(0xDD); // DirectoryTableBase
        BinaryPrimitives.WriteInt32LittleEndian(b.AsSpan(2 * pointerSize + 16), 0); // Flags
        BinaryPrimitives.WriteInt32LittleEndian(b.AsSpan(2 * pointerSize + 20), 0); // UserSID: none
        name.CopyTo(b, 2 * pointerSize + 24);
        cmdline.CopyTo(b, 2 * pointerSize + 24 + name.Length);
        return b;
    }
}
