namespace TraceLab.Sweeps.Verdicts;

public enum VerdictOutcome
{
    Reproduced,
    NotReproduced,
    Inverted,
    /// <summary>
    /// Fewer than <see cref="VerdictRule.MinimumRepeats"/> successful repeats at a point the rule needs.
    /// </summary>
    InsufficientRepeats,
    /// <summary>The sweep lacks a point or metric the rule needs (e.g. traced metrics without --trace).</summary>
    NotTested,
}

/// <summary>
/// A rule's judgement of one claim (or one aspect of it), with the criterion and the numbers behind it.
/// </summary>
public sealed record Verdict(
    string Claim, string Aspect, VerdictOutcome Outcome, string Criterion, IReadOnlyList<string> Evidence)
{
    public string OutcomeText => Text(Outcome);

    public static string Text(VerdictOutcome o) => o switch
    {
        VerdictOutcome.Reproduced => "reproduced",
        VerdictOutcome.NotReproduced => "not reproduced",
        VerdictOutcome.Inverted => "inverted",
        VerdictOutcome.InsufficientRepeats => "insufficient repeats",
        _ => "not tested",
    };

    /// <summary>One claim's overall result from its aspects: every aspect must hold for "reproduced".</summary>
    public static VerdictOutcome Combine(IEnumerable<Verdict> aspects)
    {
        var o = aspects.Select(a => a.Outcome).ToList();
        if (o.Count == 0) return VerdictOutcome.NotTested;
        if (o.Contains(VerdictOutcome.InsufficientRepeats)) return VerdictOutcome.InsufficientRepeats;
        if (o.All(x => x == VerdictOutcome.Reproduced)) return VerdictOutcome.Reproduced;
        if (o.Contains(VerdictOutcome.Inverted) && !o.Contains(VerdictOutcome.Reproduced))
            return VerdictOutcome.Inverted;
        if (o.All(x => x == VerdictOutcome.NotTested)) return VerdictOutcome.NotTested;
        return VerdictOutcome.NotReproduced;
    }
}

public interface IVerdictRule
{
    string Claim { get; }
    string Aspect { get; }
    /// <summary>The criterion in words, written into report.md and sweep.json.</summary>
    string Criterion { get; }
    Verdict Judge(SweepData data);
}
