using System.Globalization;
using System.Text.Json;
using TraceLab.Sweeps.Calibration;
using TraceLab.Sweeps.Output;
using TraceLab.Sweeps.Verdicts;
using TraceLab.Workloads;

namespace TraceLab.Sweeps.Claims;

/// <summary>
/// Reads a claims results folder (one sweep folder per predefined sweep, as <c>claims --run</c> writes them) and
/// judges every claim again from the recorded runs with the current rules, so an interrupted sweep still shows
/// what it has and hand-made results give known verdicts.
/// </summary>
public static class ClaimsReportBuilder
{
    public static ClaimsReport Build(string directory, bool quick, MachineInfo current, bool traced = false)
    {
        var log = ClaimsRunLog.Load(directory);
        var sweeps = ClaimCatalog.Sweeps().Select(d => ReadSweep(directory, d, log, current)).ToList();
        var machine = log.Machine
            ?? sweeps.Select(s => s.Measured ? ReadMachine(s.Directory) : null).FirstOrDefault(m => m is not null);
        var claims = ClaimCatalog.All.Select(c => Judge(c, sweeps.Single(s => s.Definition.Name == c.Sweep),
            machine ?? current)).ToList();
        var measured = sweeps.Where(s => s.Measured).ToList();
        return new ClaimsReport
        {
            Directory = directory,
            Quick = quick,
            Traced = traced,
            Machine = machine,
            FirstRunUtc = measured.Select(s => s.FirstRunUtc).Where(t => t is not null).Min(),
            LastRunUtc = measured.Select(s => s.LastRunUtc).Where(t => t is not null).Max(),
            LoadAverages = log.LoadAverages(),
            Sweeps = sweeps,
            Claims = claims,
        };
    }

    private static SweepResult ReadSweep(string directory, SweepDefinition d, ClaimsRunLog log, MachineInfo current)
    {
        var dir = Path.Combine(directory, d.Name);
        if (!File.Exists(Path.Combine(dir, SweepStateStore.FileName))) return new SweepResult(d, dir, Measured: false);
        var state = SweepStateStore.Load(dir);
        if (!state.Sweep.Equals(d.Name, StringComparison.OrdinalIgnoreCase) || state.Workload != d.Workload)
            throw new SweepException(
                $"{dir} holds sweep '{state.Workload} {state.Sweep}', not '{d.Workload} {d.Name}'");
        var cpus = (log.Machine ?? ReadMachine(dir) ?? current).Cpus;
        var data = Data(d, state, cpus);
        var elapsed = data.Points.Select(p => data.Stat(p, "elapsed")?.Median).OfType<double>().ToList();
        var runs = state.Runs.Where(r => r.StartedUtc != default).Select(r => r.StartedUtc).ToList();
        return new SweepResult(d, dir, Measured: true)
        {
            Complete = state.Order.All(state.IsDone),
            RunsOk = state.Runs.Count(r => r.Ok),
            RunsFailed = state.Runs.Count(r => !r.Ok),
            RunsPlanned = state.Order.Count,
            Repeats = state.Repeats,
            FirstRunUtc = runs.Count > 0 ? runs.Min() : null,
            LastRunUtc = runs.Count > 0 ? runs.Max() : null,
            Verdicts = d.Verdicts.Select(v => v.Judge(data.ForVerdicts())).ToList(),
            ShortRunWarning = SweepSummary.ShortRunWarning(data),
            ShortestPointSeconds = elapsed.Count > 0 ? elapsed.Min() : null,
            ForeignShare = log.ForeignShare(d.Name),
            LoadAverages = log.LoadAverages(d.Name),
            Calibration = state.Calibration,
            Reruns = state.Reruns ?? [],
            CalibrationWarning = ShortPointReruns.Warning(state, data.Points),
            Overrides = state.Overrides,
        };
    }

    /// <summary>A sweep's runs as its rules read them (canonical parameter values, M = the run's CPUs).</summary>
    public static SweepData Data(SweepDefinition d, SweepState state, int cpus)
    {
        var workload = WorkloadCatalog.Find(d.Workload);
        return new SweepData(d, state.SweepPoints(), state.Runs, state.Repeats)
        {
            Cpus = cpus,
            Calibrated = SweepData.CalibratedOf(state),
            Canonical = (param, value) =>
            {
                try { return workload?.FindParameter(param)?.Validate(value) ?? value; }
                catch (WorkloadException) { return value; }
            },
        };
    }

    /// <summary>
    /// The claim's outcome from the aspects its sweep could test (an aspect that needs --trace is listed as not
    /// tested but does not turn a decided claim into "not reproduced"), and whether the machine can decide it.
    /// </summary>
    public static ClaimResult Judge(SeedClaim claim, SweepResult sweep, MachineInfo machine)
    {
        var aspects = sweep.Verdicts.Where(v => v.Claim == claim.Id).ToList();
        var tested = aspects.Where(a => a.Outcome != VerdictOutcome.NotTested).ToList();
        var outcome = !sweep.Measured ? ClaimResult.NotMeasured
            : Verdict.Text(tested.Count > 0 ? Verdict.Combine(tested) : VerdictOutcome.NotTested);
        var (decidable, decision, why) = Decide(claim, sweep, machine.Cpus);
        return new ClaimResult(claim, sweep, outcome, aspects, decidable, decision, why);
    }

    /// <returns>Whether the machine can decide the claim, a short answer for the table, and why.</returns>
    public static (bool Decidable, string Short, string Why) Decide(SeedClaim claim, SweepResult sweep, int cpus)
    {
        if (cpus < claim.MinCpus)
            return (false, I($"no: needs ≥ {claim.MinCpus} CPUs"),
                I($"needs ≥ {claim.MinCpus} CPUs, this machine has {cpus}: {claim.WhyMinCpus}"));
        if (!claim.NeedsIdleCpus) return (true, "yes", "");
        return sweep.ForeignShare switch
        {
            null => (true, "yes, if the CPUs were idle",
                "the effect needs the CPUs otherwise idle; their load was not recorded"),
            > ClaimsReport.MaxForeignShare and var s => (false, I($"no: others used {s * 100:0} % of the CPUs"),
                I($"other processes used {s * 100:0} % of the CPUs while the sweep ran ")
                + I($"(more than {ClaimsReport.MaxForeignShare * 100:0} %), ")
                + "and the effect needs threads running on otherwise idle CPUs"),
            var s => (true, I($"yes (others used {s * 100:0} % of the CPUs)"), ""),
        };
    }

    private static MachineInfo? ReadMachine(string sweepDirectory)
    {
        var path = Path.Combine(sweepDirectory, "sweep.json");
        if (!File.Exists(path)) return null;
        try
        {
            using var doc = JsonDocument.Parse(File.ReadAllText(path));
            return doc.RootElement.TryGetProperty("machine", out var m)
                ? m.Deserialize(SweepJsonContext.Default.MachineInfo) : null;
        }
        catch (JsonException) { return null; }
    }

    private static string I(FormattableString s) => s.ToString(CultureInfo.InvariantCulture);
}
