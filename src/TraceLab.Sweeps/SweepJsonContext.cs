using System.Text.Json.Serialization;
using TraceLab.Sweeps.Claims;
using TraceLab.Sweeps.Output;

namespace TraceLab.Sweeps;

/// <summary>
/// The sweep files' serializer metadata (state.json, sweep.json, claims-run.json), generated at build time: no
/// reflection at run time. camelCase, indented, nulls left out.
/// </summary>
[JsonSourceGenerationOptions(
    PropertyNamingPolicy = JsonKnownNamingPolicy.CamelCase,
    WriteIndented = true,
    DefaultIgnoreCondition = JsonIgnoreCondition.WhenWritingNull)]
[JsonSerializable(typeof(SweepState))]
[JsonSerializable(typeof(SweepSummary))]
[JsonSerializable(typeof(ClaimsRunLog))]
[JsonSerializable(typeof(MachineInfo))]
public sealed partial class SweepJsonContext : JsonSerializerContext;
