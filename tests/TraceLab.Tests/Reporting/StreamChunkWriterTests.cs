using System.Text.Json;
using TraceLab.Reporting;

namespace TraceLab.Tests.Reporting;

/// <summary>
/// <see cref="StreamChunkWriter"/>: a JSON document of any length reaches the stream whole and in order, in writes
/// no larger than a chunk (what keeps report.json's writer from growing an array per section).
/// </summary>
public sealed class StreamChunkWriterTests
{
    /// <summary>A memory stream that remembers the size of each write.</summary>
    private sealed class RecordingStream : MemoryStream
    {
        public List<int> Writes { get; } = [];

        public override void Write(byte[] buffer, int offset, int count)
        {
            Writes.Add(count);
            base.Write(buffer, offset, count);
        }

        public override void Write(ReadOnlySpan<byte> buffer)
        {
            Writes.Add(buffer.Length);
            base.Write(buffer);
        }
    }

    private static void Document(Utf8JsonWriter writer, int items, string text)
    {
        writer.WriteStartArray();
        for (var i = 0; i < items; i++)
        {
            writer.WriteStartObject();
            writer.WriteNumber("tid", i);
            writer.WriteString("name", text);
            writer.WriteEndObject();
        }
        writer.WriteEndArray();
    }

    private static byte[] Reference(int items, string text)
    {
        var buffer = new System.Buffers.ArrayBufferWriter<byte>();
        using (var writer = new Utf8JsonWriter(buffer, new JsonWriterOptions { Indented = true }))
            Document(writer, items, text);
        return buffer.WrittenSpan.ToArray();
    }

    [Theory]
    [InlineData(1, "x")]
    [InlineData(20_000, "a thread name")]
    public void A_document_reaches_the_stream_whole_in_chunks(int items, string text)
    {
        const int chunk = 4096;
        using var stream = new RecordingStream();
        var chunks = new StreamChunkWriter(stream, chunk);
        using (var writer = new Utf8JsonWriter(chunks, new JsonWriterOptions { Indented = true }))
            Document(writer, items, text);
        chunks.Flush();

        var expected = Reference(items, text);
        Assert.Equal(expected, stream.ToArray());
        Assert.All(stream.Writes, w => Assert.InRange(w, 1, chunk));
        if (expected.Length > chunk) Assert.True(stream.Writes.Count >= expected.Length / chunk);
    }

    [Fact]
    public void A_value_longer_than_a_chunk_gets_a_buffer_of_its_size()
    {
        var text = new string('é', 10_000); // one string of 60,000 bytes escaped, against 1 KB chunks
        using var stream = new RecordingStream();
        var chunks = new StreamChunkWriter(stream, 1024);
        using (var writer = new Utf8JsonWriter(chunks, new JsonWriterOptions { Indented = true }))
            Document(writer, 3, text);
        chunks.Flush();

        Assert.Equal(Reference(3, text), stream.ToArray());
    }

    [Fact]
    public void Advancing_past_the_memory_given_is_refused()
    {
        var chunks = new StreamChunkWriter(new MemoryStream(), 16);
        chunks.GetSpan(8);
        Assert.Throws<ArgumentOutOfRangeException>(() => chunks.Advance(17));
    }
}
