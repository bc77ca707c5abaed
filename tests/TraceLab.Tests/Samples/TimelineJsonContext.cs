using System.Text.Json.Serialization;
using TraceLab.Analyzers.Timeline;

namespace TraceLab.Tests.Samples;

/// <summary>
/// Compares two recorded timelines as JSON (every field, deeply). Generated metadata: reflection-based
/// serialization is off in every project (Directory.Build.props), as it is in the Native AOT build.
/// </summary>
[JsonSerializable(typeof(TimelineData))]
internal sealed partial class TimelineJsonContext : JsonSerializerContext;
