using System.Text.Json;
using System.Text.Json.Serialization;
using TraceLab.Analyzers.Timeline;

namespace TraceLab.Reporting.Findings;

/// <summary>
/// A finding's window in report.json: "START:LENGTH" in ms from the region's begin, the form `--timeline-window`
/// takes (<see cref="TimelineWindow.ToString"/> and <see cref="TimelineWindow.Parse"/>); the model holds the numbers.
/// </summary>
public sealed class TimelineWindowJsonConverter : JsonConverter<TimelineWindow>
{
    public override TimelineWindow Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options)
    {
        try
        {
            return TimelineWindow.Parse(reader.GetString() ?? throw new JsonException("a window must be a string"));
        }
        catch (FormatException e)
        {
            throw new JsonException($"finding window: {e.Message}", e);
        }
    }

    public override void Write(Utf8JsonWriter writer, TimelineWindow value, JsonSerializerOptions options) =>
        writer.WriteStringValue(value.ToString());
}
