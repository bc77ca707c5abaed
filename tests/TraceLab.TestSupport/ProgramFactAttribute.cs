using Xunit;

namespace TraceLab.TestSupport;

/// <summary>
/// A real-capture test of a third-party program (stress-ng, sysbench: .ci/run installs them): skipped, with the
/// reason, where tracing or one of the programs is unavailable.
/// </summary>
public sealed class TracingProgramFactAttribute : FactAttribute
{
    public TracingProgramFactAttribute(params string[] programs)
    {
        var reason = TestEnvironment.Reason(needsTraceCmd: false, needsWorkloads: false);
        reason ??= programs.Where(p => !TestEnvironment.OnPath(p))
            .Select(p => $"{p} not installed (apt-get install -y {p}; .ci/run installs it)").FirstOrDefault();
        if (reason is not null) Skip = reason;
    }
}
