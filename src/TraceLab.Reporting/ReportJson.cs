using System.Text.Json;

namespace TraceLab.Reporting;

/// <summary>Writes and reads report.json through its generated metadata (<see cref="ReportJsonContext"/>).</summary>
public static class ReportJson
{
    /// <summary>camelCase, indented, nulls left out: <see cref="ReportJsonContext"/>'s options.</summary>
    public static JsonSerializerOptions Options => ReportJsonContext.Default.Options;

    public static string Serialize(RunReport report) =>
        JsonSerializer.Serialize(report, ReportJsonContext.Default.RunReport);

    /// <summary>
    /// The same bytes as <see cref="Serialize(RunReport)"/> in UTF-8, written as they are produced: a whole-system
    /// report keeps every figure of every thread (224 MB for 100,000 threads), which as one string cost twice that
    /// in memory, and again to encode it.
    /// </summary>
    public static void Serialize(RunReport report, Stream utf8)
    {
        // Through a fixed chunk (StreamChunkWriter), not the writer's Stream overload: that one keeps what is written
        // between flushes in a doubling array (2.2 MB inside one section of a busy system's report), and the
        // serializer's own Stream overloads buffer the whole document when a custom converter writes it (RunReport
        // has one): a pooled array of 128 MB for 45 MB of JSON, which the pool then keeps.
        var chunks = new StreamChunkWriter(utf8);
        using (var writer = new Utf8JsonWriter(chunks, new JsonWriterOptions
        {
            Indented = Options.WriteIndented,
            Encoder = Options.Encoder,
            MaxDepth = Options.MaxDepth,
        }))
        {
            RunReportJsonConverter.Write(writer, report);
            writer.Flush();
        }
        chunks.Flush();
    }

    public static RunReport Deserialize(string json) =>
        JsonSerializer.Deserialize(json, ReportJsonContext.Default.RunReport)
        ?? throw new JsonException("empty report");
}
