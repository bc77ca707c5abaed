using System.Buffers.Binary;
using TraceLab.Core;
using TraceLab.Formats.Registry;
using TraceLab.Formats.TraceDat;

namespace TraceLab.Formats.Tests;

/// <summary>Events without a format and formats the parser cannot read are skipped and counted, never fatal.</summary>
public sealed class UnknownEventFormatTests : IDisposable
{
    private readonly TestTraceFile _files = new();

    public void Dispose() => _files.Dispose();

    private static byte[] EventWithId(ushort id, int pid)
    {
        var payload = new byte[16];
        BinaryPrimitives.WriteUInt16LittleEndian(payload, id);
        BinaryPrimitives.WriteInt32LittleEndian(payload.AsSpan(4), pid);
        return payload;
    }

    [Fact]
    public void Event_id_without_a_format_is_counted_and_passed_on_as_other()
    {
        var page = new PageBuilder(100).Data(0, EventWithId(60000, 7)).Data(1, TestTraceFile.Switch(1, 2))
            .Data(1, EventWithId(9999, 8)).Build();
        var path = _files.Write("unknown-id.dat", [[page]]);

        using var reader = TraceDatReader.Open(path);
        var sink = new TraceDatRoundTripTests.ListSink();
        reader.Read(sink);

        Assert.Equal(3, reader.Info.EventCount);
        Assert.Equal(2, reader.Info.UnknownEvents);
        Assert.Equal(
            [KernelEventKind.Other, KernelEventKind.Switch, KernelEventKind.Other], sink.Events.Select(e => e.Kind));
    }

    [Fact]
    public void Formats_the_parser_cannot_read_are_skipped_and_their_events_count_as_unknown()
    {
        var noId = ("custom",
            "name: no_id_line\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n");
        var badId = ("custom", "name: id_too_big\nID: 70000\nformat:\n");
        var page = new PageBuilder(100).Data(0, EventWithId(4464, 7)).Data(1, TestTraceFile.Switch(1, 2)).Build();
        var path = _files.Write("bad-format.dat", [[page]], noId, badId);

        using var reader = TraceDatReader.Open(path);
        var sink = new TraceDatRoundTripTests.ListSink();
        reader.Read(sink);

        Assert.Equal(2, reader.Info.SkippedFormats);
        Assert.DoesNotContain(reader.Formats, f => f.Name is "no_id_line" or "id_too_big");
        Assert.Equal(1, reader.Info.UnknownEvents);
        Assert.Equal(KernelEventKind.Switch, sink.Events[1].Kind);
    }

    [Fact]
    public void Field_with_a_negative_offset_is_ignored_rather_than_read()
    {
        var text = TestData.Resource("sched_sched_switch.format")
            .Replace("offset:24;", "offset:-4;", StringComparison.Ordinal);
        Assert.Contains("offset:-4;", text, StringComparison.Ordinal);
        var format = Ftrace.FtraceEventFormat.Parse(text, "sched");
        Assert.DoesNotContain(format.Fields, f => f.Offset < 0);

        var decoder = new Ftrace.KernelEventDecoder([format], new ThreadTable());
        var e = new KernelEvent();
        Assert.True(decoder.Decode(TestTraceFile.Switch(1, 2), 0, 0, ref e));
    }

    [Fact]
    public void Header_page_the_parser_cannot_read_fails_naming_the_file()
    {
        var path = _files.Write("ok.dat", [[new PageBuilder(100).Data(0, TestTraceFile.Switch(1, 2)).Build()]]);
        var bytes = File.ReadAllBytes(path);
        var at = bytes.AsSpan().IndexOf("field: u64 timestamp"u8);
        "field: u64 xxxxxxxxx"u8.CopyTo(bytes.AsSpan(at));
        File.WriteAllBytes(path, bytes);

        var ex = Assert.Throws<TraceFormatException>(
            () => TraceDatReader.Open(path, new TraceReadOptions { Salvage = true }));
        Assert.Equal(path, ex.File);
        Assert.Contains("header_page", ex.Message, StringComparison.Ordinal);
    }
}
