using System.Text.Json;
using System.Text.Json.Serialization;

namespace TraceLab.Reporting;

/// <summary>
/// report.json's top level: RunReport's own fields, then each analysis's section in <see cref="AnalysisReports.All"/>
/// order under its registration's name (so a new analysis needs no RunReport property), then the warnings. Nested
/// objects go through the serializer with the same options (camelCase, nulls left out).
/// </summary>
public sealed class RunReportJsonConverter : JsonConverter<RunReport>
{
    public override void Write(Utf8JsonWriter writer, RunReport value, JsonSerializerOptions options) =>
        Write(writer, value, options, flush: null);

    /// <param name="flush">
    /// Called after each thread and section: a writer on a stream can hand what it holds to the stream there, so a
    /// report of 100,000 threads is never in memory whole (<see cref="ReportJson.Serialize(RunReport, Stream)"/>).
    /// </param>
    internal static void Write(Utf8JsonWriter writer, RunReport value, JsonSerializerOptions options,
        Action? flush)
    {
        writer.WriteStartObject();
        writer.WriteNumber(Name("SchemaVersion", options), value.SchemaVersion);
        Property(writer, "Run", value.Run, options);
        Property(writer, "Capture", value.Capture, options);
        Property(writer, "Region", value.Region, options);
        Property(writer, "Process", value.Process, options);
        Property(writer, "Analyses", value.Analyses, options);
        if (flush is null) Property(writer, "Threads", value.Threads, options);
        else
        {
            // Element by element: the same bytes as the list's converter writes, with a flush between threads.
            writer.WritePropertyName(Name("Threads", options));
            writer.WriteStartArray();
            foreach (var thread in value.Threads)
            {
                JsonSerializer.Serialize(writer, thread, options);
                flush();
            }
            writer.WriteEndArray();
        }
        Property(writer, "Processes", value.Processes, options);
        Property(writer, "RestOfSystem", value.RestOfSystem, options);
        Property(writer, "System", value.System, options);
        foreach (var analysis in AnalysisReports.All)
            if (analysis.JsonName is { } name && value.SectionOf(analysis) is { } section)
            {
                writer.WritePropertyName(name);
                JsonSerializer.Serialize(writer, section, analysis.SectionType ?? section.GetType(), options);
                flush?.Invoke();
            }
        Property(writer, "Warnings", value.Warnings, options);
        writer.WriteEndObject();
    }

    public override RunReport Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options)
    {
        using var doc = JsonDocument.ParseValue(ref reader);
        var root = doc.RootElement;
        if (root.ValueKind != JsonValueKind.Object) throw new JsonException("report.json: not an object");
        var report = new RunReport
        {
            SchemaVersion = Get<int?>(root, "SchemaVersion", options) ?? 2,
            Run = Get<RunSection>(root, "Run", options),
            Capture = Get<CaptureSection>(root, "Capture", options) ?? throw Missing("capture"),
            Region = Get<RegionSection>(root, "Region", options) ?? throw Missing("region"),
            Process = Get<ProcessSection>(root, "Process", options),
            Analyses = Get<List<string>>(root, "Analyses", options) ?? [],
            Threads = Get<List<ThreadSection>>(root, "Threads", options) ?? throw Missing("threads"),
            Processes = Get<List<ProcessSummary>>(root, "Processes", options) ?? [],
            RestOfSystem = Get<RestOfSystemSection>(root, "RestOfSystem", options),
            System = Get<SystemSection>(root, "System", options),
            Warnings = Get<List<string>>(root, "Warnings", options) ?? [],
        };
        foreach (var analysis in AnalysisReports.All)
            if (analysis is { JsonName: { } name, SectionType: { } type } && root.TryGetProperty(name, out var element)
                && element.ValueKind != JsonValueKind.Null)
                report.SetSection(analysis, element.Deserialize(type, options));
        return report;
    }

    private static JsonException Missing(string property) => new($"report.json: no {property}");

    private static string Name(string property, JsonSerializerOptions options) =>
        options.PropertyNamingPolicy?.ConvertName(property) ?? property;

    private static void Property<T>(Utf8JsonWriter writer, string property, T? value, JsonSerializerOptions options)
    {
        if (value is null && options.DefaultIgnoreCondition == JsonIgnoreCondition.WhenWritingNull) return;
        writer.WritePropertyName(Name(property, options));
        JsonSerializer.Serialize(writer, value, options);
    }

    private static T? Get<T>(JsonElement root, string property, JsonSerializerOptions options) =>
        root.TryGetProperty(Name(property, options), out var element) ? element.Deserialize<T>(options) : default;
}
