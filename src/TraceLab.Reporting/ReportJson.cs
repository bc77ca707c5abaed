using System.Text.Json;
using System.Text.Json.Serialization;

namespace TraceLab.Reporting;

public static class ReportJson
{
    public static readonly JsonSerializerOptions Options = new()
    {
        PropertyNamingPolicy = JsonNamingPolicy.CamelCase,
        WriteIndented = true,
        DefaultIgnoreCondition = JsonIgnoreCondition.WhenWritingNull,
    };

    public static string Serialize(RunReport report) => JsonSerializer.Serialize(report, Options);

    public static RunReport Deserialize(string json) =>
        JsonSerializer.Deserialize<RunReport>(json, Options) ?? throw new JsonException("empty report");
}
