using TraceLab.Analyzers.Findings;

namespace TraceLab.Reporting.Findings;

/// <summary>Finds an object's evidence by its printed name (the report names objects as
/// <c>LockObject.ToString()</c>).</summary>
internal static class ObjectWindows
{
    public static ObjectEvidence? Find(FindingEvidence evidence, string name) =>
        evidence.Objects.Values.FirstOrDefault(o => o.Object.ToString() == name);

    public static BucketSeries Blocked(FindingEvidence evidence, string name) =>
        Find(evidence, name)?.Blocked ?? BucketSeries.Empty;
}
