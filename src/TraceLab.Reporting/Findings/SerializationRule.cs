using TraceLab.Analyzers.Findings;
using TraceLab.Analyzers.Locks;

namespace TraceLab.Reporting.Findings;

/// <summary>
/// `serialization`: an object (a gate) the threads pass one at a time, each waiting far longer than a convoy
/// handoff: two or more reported threads, and at least half of them, blocked on it, released by two or more different
/// threads, waits averaging
/// at least <see cref="MinMeanWaitNs"/>, the waiters blocked on it at least <see cref="MinWaitersBlockedShare"/> of
/// their time, and no convoy episode on it. Severity: the reported threads' time blocked on it.
/// </summary>
public sealed class SerializationRule : IFindingRule
{
    /// <summary>The convoy analysis's longest hold (ConvoyAnalyzer.MaxHoldNs): longer waits are not handoff
    /// costs.</summary>
    public const long MinMeanWaitNs = 1_000_000;
    /// <summary>The waiters' blocked time on it ÷ their thread time, at least: they spend most of their time behind
    /// it.</summary>
    public const double MinWaitersBlockedShare = 0.5;

    public string Kind => "serialization";

    public IEnumerable<FindingSection> Evaluate(FindingContext context)
    {
        if (context.Evidence is not { } evidence) yield break;
        var gates = Gates(evidence.Objects.Values);
        foreach (var gate in gates.OrderBy(g => g[0].Object.ToString(), StringComparer.Ordinal))
        {
            var names = gate.Select(o => o.Object.ToString()).ToList();
            var name = names.Count == 1 ? names[0] : $"{names[0]} with 0x{gate[1].Object.Id:x} (a condition variable)";
            var blockedNs = new Dictionary<int, long>();
            foreach (var (tid, ns) in gate.SelectMany(o => o.BlockedNs))
                blockedNs[tid] = blockedNs.GetValueOrDefault(tid) + ns;
            var waiters = blockedNs.Where(kv => context.Reported.Contains(kv.Key) && kv.Value > 0)
                .Select(kv => kv.Key).Order().ToList();
            var releasers = gate.SelectMany(o => o.Releasers).Distinct().Count();
            var blockingWaits = gate.Sum(o => o.BlockingWaits);
            // "Everything waits on it": at least half of the reported threads blocked on it.
            if (waiters.Count < 2 || 2 * waiters.Count < context.Reported.Count || releasers < 2
                || blockingWaits == 0)
                continue;
            var blocked = waiters.Sum(t => blockedNs[t]);
            var mean = (double)blockedNs.Values.Sum() / blockingWaits;
            if (mean < MinMeanWaitNs) continue;
            if (context.Report.Convoys?.Objects.Any(x => names.Contains(x.Object) && x.Episodes > 0) == true)
                continue;
            var waitersTime = context.Report.Threads.Where(t => waiters.Contains(t.Tid))
                .Sum(t => t.RunNs + t.ReadyNs + t.WaitNs);
            var blockedShare = waitersTime > 0 ? (double)blocked / waitersTime : 0;
            if (blockedShare < MinWaitersBlockedShare) continue;
            var evidenceFigures = new List<FindingFigure>
            {
                Figure.Of("findings.evidence.blockedNs", blocked),
                Figure.Of("findings.evidence.blockingWaits", blockingWaits),
                Figure.Of("findings.evidence.meanBlockedNs", mean),
                Figure.Of("findings.evidence.releasers", releasers),
                Figure.Of("findings.evidence.waitersBlockedShare", blockedShare),
            };
            if (context.Report.WaitGraph?.Knots.FirstOrDefault(k => k.IsSink && waiters.All(k.Vertices.Contains))
                is { } knot)
                evidenceFigures.Add(Figure.Of("waitGraph.knots[].shareOfWait", knot.ShareOfWait));
            yield return new FindingSection
            {
                Kind = Kind,
                Severity = FindingEngine.Round(context.Share(blocked)),
                Title = $"Serialization on {name}: {EnglishCount.Of(waiters.Count, "thread")} passed it one at a " +
                    "time, " +
                    $"blocked {blocked / 1e6:0.#} ms in {EnglishCount.Of(blockingWaits, "wait")} " +
                    $"({mean / 1e6:0.#} ms each on average)",
                Evidence = evidenceFigures,
                Threads = waiters,
                Objects = names,
                Windows = FindingContext.Windows(gate.Select(o => o.Blocked).ToArray()),
                Remedy = "The threads behind this object run one after another, so adding threads adds no speed. If " +
                    "it is a gate limiting the active threads, admit as many as there are CPUs (one active thread is " +
                    "best only when they all fight over one critical section, TM5); otherwise shorten what is done " +
                    "while holding it, or split it.",
                Claims = ["TM5"],
            };
        }
    }

    /// <summary>
    /// The objects judged as one gate each. glibc's condition variable parks its waiters on two futex words 4 bytes
    /// apart (<c>__g_signals[0]</c> at an 8-byte boundary and <c>[1]</c>) and moves them from one group to the other
    /// as it is signalled, so a lock built on one (CPython's GIL) splits its waits between the two: such a pair,
    /// of one process and with a waiter in common, is one gate. Every other object is a gate of its own.
    /// </summary>
    private static List<List<ObjectEvidence>> Gates(IEnumerable<ObjectEvidence> objects)
    {
        var all = objects.ToList();
        var byObject = all.ToDictionary(o => o.Object);
        var paired = new HashSet<LockObject>();
        var gates = new List<List<ObjectEvidence>>();
        foreach (var o in all)
        {
            if (o.Object.Kind != LockObjectKind.Futex || o.Object.Process == 0 || (o.Object.Id & 7) != 0) continue;
            if (!byObject.TryGetValue(o.Object with { Id = o.Object.Id + 4 }, out var second)) continue;
            if (!o.BlockedNs.Keys.Any(t => o.BlockedNs[t] > 0 && second.BlockedNs.GetValueOrDefault(t) > 0)) continue;
            gates.Add([o, second]);
            paired.Add(o.Object);
            paired.Add(second.Object);
        }
        gates.AddRange(all.Where(o => !paired.Contains(o.Object)).Select(o => new List<ObjectEvidence> { o }));
        return gates;
    }
}
