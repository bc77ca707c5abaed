using System.Text.Json;
using System.Text.Json.Serialization;
using TraceLab.Analyzers.Timeline;

namespace TraceLab.Reporting.Findings;

/// <summary>
/// A finding's windows in report.json: an array of "START:LENGTH" in ms from the region's begin, the form
/// `--timeline-window` takes (<see cref="TimelineWindow.ToString"/> and <see cref="TimelineWindow.Parse"/>); the model
/// holds the numbers.
/// </summary>
/// <remarks>
/// Named on the property (<see cref="FindingSection.Windows"/>), not in <see cref="ReportJsonContext"/>'s options:
/// any converter in the options turns off the generated fast-path writers for every type of the context, and
/// report.json was then written through the serializer's general object converters, in about twice the time (a busy
/// system report's 4 MB: docs/performance.md#report-json-fast-path).
/// </remarks>
public sealed class TimelineWindowsJsonConverter : JsonConverter<List<TimelineWindow>>
{
    public override List<TimelineWindow> Read(ref Utf8JsonReader reader, Type typeToConvert,
        JsonSerializerOptions options)
    {
        if (reader.TokenType != JsonTokenType.StartArray) throw new JsonException("finding windows must be an array");
        var windows = new List<TimelineWindow>();
        while (reader.Read() && reader.TokenType != JsonTokenType.EndArray)
        {
            if (reader.TokenType != JsonTokenType.String) throw new JsonException("a window must be a string");
            try
            {
                windows.Add(TimelineWindow.Parse(reader.GetString()!));
            }
            catch (FormatException e)
            {
                throw new JsonException($"finding window: {e.Message}", e);
            }
        }
        return windows;
    }

    public override void Write(Utf8JsonWriter writer, List<TimelineWindow> value, JsonSerializerOptions options)
    {
        writer.WriteStartArray();
        foreach (var window in value) writer.WriteStringValue(window.ToString());
        writer.WriteEndArray();
    }
}
