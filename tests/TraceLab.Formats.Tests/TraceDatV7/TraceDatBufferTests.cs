using TraceLab.Core;
using TraceLab.Formats.Registry;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Formats.Tests.TraceDatV7;

/// <summary>
/// A v7 file with two buffers (the top level, and an instance holding a copy of the top level's CPU 0 data), built
/// by <see cref="V7Writer"/> from a real zlib file: the top level is read by default, the instance by name.
/// </summary>
public sealed class TraceDatBufferTests : IDisposable
{
    private const string Source = "tracecmd/hip24_test_host_kvm_v7zlib.dat";
    private readonly string _dir = Directory.CreateTempSubdirectory("tracelab-buffers-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    [ExternalTraceFact(Source)]
    public void The_top_buffer_is_read_by_default_and_an_instance_by_name()
    {
        var path = Path.Combine(_dir, "two-buffers.dat");
        V7Writer.Rewrite(ExternalTraces.PathOf(Source), path, "zstd", instance: "guest0");

        var (top, topSink) = TraceDatV7ExternalTests.Read(path);
        Assert.Equal(11_721, top.EventCount);
        Assert.Equal(["", "guest0"], top.Buffers);
        Assert.Equal("", top.Buffer);

        var firstCpu = TraceDatV7ExternalTests.ReadEvents(path).Min(e => e.Cpu);
        var expected = TraceDatV7ExternalTests.ReadEvents(path).Where(e => e.Cpu == firstCpu).ToList();
        Assert.InRange(expected.Count, 1, 11_720);
        var instance = TraceDatV7ExternalTests.ReadEvents(path, new TraceReadOptions { BufferName = "guest0" });
        Assert.Equal(expected, instance);
        Assert.Equal(expected.Count, RawEventCounter.Count(path, "guest0").Values.Sum());

        var (named, _) = TraceDatV7ExternalTests.Read(path, new TraceReadOptions { BufferName = "guest0" });
        Assert.Equal("guest0", named.Buffer);
        Assert.Equal(expected.Count, named.EventCount);
        Assert.Equal(15, topSink.Cpus.Count);
    }

    [ExternalTraceFact(Source)]
    public void An_unknown_buffer_is_refused_naming_the_ones_there_are()
    {
        var path = Path.Combine(_dir, "two-buffers.dat");
        V7Writer.Rewrite(ExternalTraces.PathOf(Source), path, "zlib", instance: "guest0");
        var e = Assert.Throws<TraceFormatException>(
            () => TraceDatReader.Open(path, new TraceReadOptions { BufferName = "guest1" }));
        Assert.Contains("the buffers 'top', 'guest0'", e.Message, StringComparison.Ordinal);
    }
}
