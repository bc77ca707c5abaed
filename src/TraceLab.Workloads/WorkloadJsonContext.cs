using System.Text.Json.Serialization;

namespace TraceLab.Workloads;

/// <summary>
/// workload.json's serializer metadata, generated at build time (no reflection at run time). Default options: every
/// property of <see cref="WorkloadResult"/> spells its JSON name.
/// </summary>
[JsonSerializable(typeof(WorkloadResult))]
internal sealed partial class WorkloadJsonContext : JsonSerializerContext;
