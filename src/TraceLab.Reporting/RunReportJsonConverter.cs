using System.Text.Json;
using System.Text.Json.Serialization;
using System.Text.Json.Serialization.Metadata;

namespace TraceLab.Reporting;

/// <summary>
/// report.json's top level: RunReport's own fields, then each analysis's section in <see cref="AnalysisReports.All"/>
/// order under its registration's name (so a new analysis needs no RunReport property), then the warnings. Nested
/// objects go through their generated metadata in <see cref="ReportJsonContext"/> (camelCase, nulls left out), each
/// section through its registration's <see cref="IAnalysisReport.SectionJson"/>.
/// </summary>
public sealed class RunReportJsonConverter : JsonConverter<RunReport>
{
    private static ReportJsonContext Json => ReportJsonContext.Default;

    public override void Write(Utf8JsonWriter writer, RunReport value, JsonSerializerOptions options) =>
        Write(writer, value);

    /// <summary>
    /// report.json's document: its sections in report order (<see cref="AnalysisReports.All"/>). On a writer over a
    /// <see cref="StreamChunkWriter"/> the document goes out in chunks as it is written, so a report of 100,000
    /// threads is never in memory whole (<see cref="ReportJson.Serialize(RunReport, Stream)"/>).
    /// </summary>
    internal static void Write(Utf8JsonWriter writer, RunReport value)
    {
        writer.WriteStartObject();
        writer.WriteNumber(Name("SchemaVersion"), value.SchemaVersion);
        Property(writer, "Run", value.Run, Json.RunSection);
        Property(writer, "Capture", value.Capture, Json.CaptureSection);
        Property(writer, "Region", value.Region, Json.RegionSection);
        Property(writer, "Process", value.Process, Json.ProcessSection);
        Property(writer, "Analyses", value.Analyses, Json.ListString);
        Property(writer, "Threads", value.Threads, Json.ListThreadSection);
        Property(writer, "Processes", value.Processes, Json.ListProcessSummary);
        Property(writer, "RestOfSystem", value.RestOfSystem, Json.RestOfSystemSection);
        Property(writer, "System", value.System, Json.SystemSection);
        Property(writer, "Self", value.Self, Json.SelfCostSection);
        Property(writer, "Excluded", value.Excluded, Json.SelfCostSection);
        foreach (var analysis in AnalysisReports.All)
            if (analysis is { JsonName: { } name, SectionJson: { } json } && value.SectionOf(analysis) is { } section)
            {
                writer.WritePropertyName(name);
                JsonSerializer.Serialize(writer, section, json);
            }
        Property(writer, "Stacks", value.Stacks, Json.StacksSection);
        Property(writer, "Warnings", value.Warnings, Json.ListString);
        writer.WriteEndObject();
    }

    public override RunReport Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options)
    {
        using var doc = JsonDocument.ParseValue(ref reader);
        var root = doc.RootElement;
        if (root.ValueKind != JsonValueKind.Object) throw new JsonException("report.json: not an object");
        var report = new RunReport
        {
            SchemaVersion = Get(root, "SchemaVersion", Json.NullableInt32) ?? 2,
            Run = Get(root, "Run", Json.RunSection),
            Capture = Get(root, "Capture", Json.CaptureSection) ?? throw Missing("capture"),
            Region = Get(root, "Region", Json.RegionSection) ?? throw Missing("region"),
            Process = Get(root, "Process", Json.ProcessSection),
            Analyses = Get(root, "Analyses", Json.ListString) ?? [],
            Threads = Get(root, "Threads", Json.ListThreadSection) ?? throw Missing("threads"),
            Processes = Get(root, "Processes", Json.ListProcessSummary) ?? [],
            RestOfSystem = Get(root, "RestOfSystem", Json.RestOfSystemSection),
            System = Get(root, "System", Json.SystemSection),
            Self = Get(root, "Self", Json.SelfCostSection),
            Excluded = Get(root, "Excluded", Json.SelfCostSection),
            Stacks = Get(root, "Stacks", Json.StacksSection),
            Warnings = Get(root, "Warnings", Json.ListString) ?? [],
        };
        foreach (var analysis in AnalysisReports.All)
            if (analysis is { JsonName: { } name, SectionJson: { } json } && root.TryGetProperty(name, out var element)
                && element.ValueKind != JsonValueKind.Null)
                report.SetSection(analysis, element.Deserialize(json));
        return report;
    }

    private static JsonException Missing(string property) => new($"report.json: no {property}");

    private static string Name(string property) =>
        Json.Options.PropertyNamingPolicy?.ConvertName(property) ?? property;

    /// <summary>Leaves a null out, as <see cref="ReportJsonContext"/>'s options do for nested objects.</summary>
    private static void Property<T>(Utf8JsonWriter writer, string property, T? value, JsonTypeInfo<T> json)
    {
        if (value is null) return;
        writer.WritePropertyName(Name(property));
        JsonSerializer.Serialize(writer, value, json);
    }

    private static T? Get<T>(JsonElement root, string property, JsonTypeInfo<T> json) =>
        root.TryGetProperty(Name(property), out var element) ? element.Deserialize(json) : default;
}
