using TraceLab.Core;
using TraceLab.Formats.Registry;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Formats.Tests.TraceDatV7;

/// <summary>
/// The zlib-compressed v7 files written by trace-cmd 3.2 on other machines (the external traces), checked
/// against the reference counts in that folder's README (an independent v7 reader, checked against trace-cmd).
/// </summary>
public sealed class TraceDatV7ExternalTests
{
    private const string TasksetGuest = "tracecmd/hip24_taskset_guest_v7zlib.dat";
    private const string TestGuest = "tracecmd/hip24_test_guest_v7zlib.dat";
    private const string KvmHost = "tracecmd/hip24_test_host_kvm_v7zlib.dat";

    [ExternalTraceTheory(TasksetGuest, TestGuest)]
    [InlineData(TasksetGuest, 226_013, 7_961, 4_526, 4_526)]
    [InlineData(TestGuest, 90_029, 3_835, 2_162, 2_162)]
    public void Zlib_guest_files_read_with_the_reference_counts(
        string file, long events, long switches, long wakings, long wakeups)
    {
        var path = ExternalTraces.PathOf(file);
        var (info, sink) = Read(path);

        Assert.Equal(7, Version(path));
        Assert.Equal(events, info.EventCount);
        Assert.Equal(events, sink.All);
        Assert.Equal(switches, sink.Switches);
        Assert.Equal(wakings, sink.Wakings);

        var raw = RawEventCounter.Count(path);
        Assert.Equal(events, raw.Values.Sum());
        Assert.Equal(switches, raw["sched_switch"]);
        Assert.Equal(wakings, raw["sched_waking"]);
        Assert.Equal(wakeups, raw["sched_wakeup"]);

        // tsc2nsec: raw TSC counts in the pages become nanoseconds (TSC2NSEC with the TIME_SHIFT offset applied first),
        // so the span of a capture of a few seconds is seconds, not the TSC ticks' ~3x more.
        Assert.Equal("tsc2nsec", info.TraceClock);
        var span = TimeSpan.FromTicks((info.LastTimestamp - info.FirstTimestamp) / 100);
        Assert.InRange(span, TimeSpan.FromMilliseconds(100), TimeSpan.FromMinutes(10));
        Assert.Equal([""], info.Buffers);
        Assert.Equal("5.15.94", info.KernelRelease);
    }

    [ExternalTraceFact(KvmHost)]
    public void The_kvm_host_file_reads_its_15_cpu_streams_without_scheduler_events()
    {
        var path = ExternalTraces.PathOf(KvmHost);
        var (info, sink) = Read(path);

        Assert.Equal(11_721, info.EventCount);
        Assert.Equal(0, sink.Switches);
        Assert.Equal(0, sink.Wakings);
        Assert.Equal(20, info.CpuCount);
        Assert.Equal(15, sink.Cpus.Count);

        var raw = RawEventCounter.Count(path);
        Assert.Equal(5_861, raw["kvm_entry"]);
        Assert.Equal(5_860, raw["kvm_exit"]);
        Assert.Equal(11_721, raw.Values.Sum());
    }

    [ExternalTraceFact(TestGuest)]
    public void Events_come_in_timestamp_order_and_a_second_read_gives_the_same()
    {
        var path = ExternalTraces.PathOf(TestGuest);
        var first = ReadEvents(path);
        Assert.True(first.Zip(first.Skip(1)).All(p => p.First.Timestamp <= p.Second.Timestamp),
            "events out of timestamp order");
        Assert.Equal(first, ReadEvents(path));
    }

    [ExternalTraceFact(TestGuest)]
    public void An_unknown_buffer_name_is_refused_with_the_buffers_the_file_has()
    {
        var path = ExternalTraces.PathOf(TestGuest);
        var e = Assert.Throws<TraceFormatException>(
            () => TraceDatReader.Open(path, new TraceReadOptions { BufferName = "nope" }));
        Assert.Contains("a buffer named 'nope'; the file has the buffers 'top'", e.Message, StringComparison.Ordinal);
        using var top = TraceDatReader.Open(path, new TraceReadOptions { BufferName = "top" });
        Assert.Equal("", top.Info.Buffer);
    }

    internal static int Version(string path)
    {
        using var reader = TraceDatReader.Open(path);
        return reader.FileVersion;
    }

    internal static (TraceInfo Info, CountingSink Sink) Read(string path, TraceReadOptions? options = null)
    {
        using var reader = TraceDatReader.Open(path, options);
        var sink = new CountingSink();
        reader.Read(sink);
        return (reader.Info, sink);
    }

    internal static List<KernelEvent> ReadEvents(string path, TraceReadOptions? options = null)
    {
        using var reader = TraceDatReader.Open(path, options);
        var sink = new TraceDatRoundTripTests.ListSink();
        reader.Read(sink);
        return sink.Events;
    }

    internal sealed class CountingSink : IKernelEventSink
    {
        public long All, Switches, Wakings;
        public HashSet<int> Cpus { get; } = new();

        public void OnEvent(in KernelEvent e)
        {
            All++;
            Cpus.Add(e.Cpu);
            if (e.Kind == KernelEventKind.Switch) Switches++;
            else if (e.Kind == KernelEventKind.Waking) Wakings++;
        }
    }
}
