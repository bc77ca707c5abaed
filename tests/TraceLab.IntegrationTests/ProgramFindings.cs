using TraceLab.Reporting.Findings;

namespace TraceLab.IntegrationTests;

/// <summary>
/// The findings about the program under test: without `cpu-contention`, which is about the machine (a CPU hog beside
/// the run, the capture's own cost) and may rank anywhere on a loaded one; the tests judge what the program does.
/// </summary>
internal static class ProgramFindings
{
    public static List<FindingSection> Of(IEnumerable<FindingSection>? findings) =>
        (findings ?? []).Where(f => f.Kind != "cpu-contention").ToList();
}
