using System.Text.Json.Serialization;
using System.Text.Json.Serialization.Metadata;
using TraceLab.Reporting.Findings;
using TraceLab.Reporting.Sections;

namespace TraceLab.Reporting;

/// <summary>
/// report.json's serializer metadata, generated at build time: no reflection at run time (a Native AOT build needs
/// none, and the JIT build skips System.Text.Json's warm-up). RunReport itself goes through its converter
/// (<see cref="RunReportJsonConverter"/>), which writes the types listed here. Each analysis's section type needs its
/// line (docs/architecture.md, "Add an analysis"); <see cref="Section{T}"/> says which one is missing. The options
/// hold no converter: one there turns off the generated fast-path writers of every type here (a value with a form of
/// its own names its converter on the property, as FindingSection.Windows does).
/// </summary>
[JsonSourceGenerationOptions(
    PropertyNamingPolicy = JsonKnownNamingPolicy.CamelCase,
    WriteIndented = true,
    DefaultIgnoreCondition = JsonIgnoreCondition.WhenWritingNull)]
[JsonSerializable(typeof(RunReport))]
[JsonSerializable(typeof(int?))]
[JsonSerializable(typeof(RunSection))]
[JsonSerializable(typeof(CaptureSection))]
[JsonSerializable(typeof(RegionSection))]
[JsonSerializable(typeof(ProcessSection))]
[JsonSerializable(typeof(List<string>))]
[JsonSerializable(typeof(List<ThreadSection>))]
[JsonSerializable(typeof(List<ProcessSummary>))]
[JsonSerializable(typeof(RestOfSystemSection))]
[JsonSerializable(typeof(SystemSection))]
[JsonSerializable(typeof(SelfCostSection))]
[JsonSerializable(typeof(Stacks.StacksSection))]
// The analyses' sections (AnalysisReports.All).
[JsonSerializable(typeof(KernelSection))]
[JsonSerializable(typeof(ConvoySection))]
[JsonSerializable(typeof(WakeupSection))]
[JsonSerializable(typeof(SmpSection))]
[JsonSerializable(typeof(WaitGraphSection))]
[JsonSerializable(typeof(Waits.WaitsSection))]
[JsonSerializable(typeof(List<FindingSection>))]
public sealed partial class ReportJsonContext : JsonSerializerContext
{
    /// <summary>The metadata of an analysis's section type; throws, naming the line to add, when it has none.</summary>
    public static JsonTypeInfo<T> Section<T>() =>
        Default.GetTypeInfo(typeof(T)) as JsonTypeInfo<T> ?? throw new InvalidOperationException(
            $"{typeof(T).Name} is not in {nameof(ReportJsonContext)}: add [JsonSerializable(typeof({typeof(T).Name}))]"
            + " to src/TraceLab.Reporting/ReportJsonContext.cs");
}
