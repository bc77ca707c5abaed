namespace TraceLab.Analyzers;

/// <summary>
/// The analyses a run can select, fixed when it is made: an analysis's selection bit is its position in the list,
/// so a selection means the same in every run and every test, whatever else a process has made. Built once from a
/// list (<see cref="Analyses.Catalog"/> for the built-ins) and passed to whoever selects, parses or runs analyses.
/// </summary>
public sealed class AnalysisCatalog
{
    private readonly AnalysisDefinition[] _all;

    public AnalysisCatalog(IEnumerable<AnalysisDefinition> analyses)
    {
        _all = [.. analyses];
        if (_all.Length > AnalysisSelection.MaxAnalyses)
            throw new ArgumentException($"more than {AnalysisSelection.MaxAnalyses} analyses", nameof(analyses));
        for (var i = 0; i < _all.Length; i++)
        {
            if (Array.FindIndex(
                _all, d => string.Equals(d.Name, _all[i].Name, StringComparison.OrdinalIgnoreCase)) != i)
                throw new ArgumentException($"analysis '{_all[i].Name}' is listed twice", nameof(analyses));
            foreach (var observed in _all[i].Observes)
            {
                if (Array.IndexOf(_all, observed) is var at && (at < 0 || at >= i))
                    throw new ArgumentException(
                        $"analysis '{_all[i].Name}' observes '{observed.Name}', which is not listed before it",
                        nameof(analyses));
            }
        }
    }

    /// <summary>Every analysis, in catalog order (the order analyzers are made in a pass).</summary>
    public IReadOnlyList<AnalysisDefinition> All => _all;

    /// <summary>
    /// The analyses `--analysis` can name (those not selected <see cref="AnalysisDefinition.OnRequest"/>).
    /// </summary>
    public IEnumerable<AnalysisDefinition> Selectable => _all.Where(a => !a.OnRequest);

    /// <summary>The selection of <paramref name="analysis"/> alone; throws when the catalog does not list it.</summary>
    public AnalysisSelection Of(AnalysisDefinition analysis) =>
        Array.IndexOf(_all, analysis) is var i and >= 0
            ? AnalysisSelection.Bit(i)
            : throw new ArgumentException($"analysis '{analysis.Name}' is not in this catalog", nameof(analysis));

    /// <summary>The selected analyses, in catalog order.</summary>
    public IEnumerable<AnalysisDefinition> Selected(AnalysisSelection selection) =>
        _all.Where((_, i) => selection.Includes(AnalysisSelection.Bit(i)));

    /// <summary>Whether <paramref name="analysis"/> is listed and selected.</summary>
    public bool IsSelected(AnalysisSelection selection, AnalysisDefinition analysis) =>
        Array.IndexOf(_all, analysis) is var i and >= 0 && selection.Includes(AnalysisSelection.Bit(i));

    /// <summary>The selectable analyses' names, in catalog order.</summary>
    public IEnumerable<string> Names => Selectable.Select(a => a.Name);

    /// <summary>
    /// Parses "threads,kernel,..." ("all" included) against the selectable analyses; throws
    /// <see cref="ArgumentException"/> naming the unknown entry and the known names.
    /// </summary>
    public AnalysisSelection Parse(string text)
    {
        string Known() => string.Join(", ", Names.Append("all"));
        var selection = AnalysisSelection.None;
        foreach (var part in text.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            if (string.Equals(part, "all", StringComparison.OrdinalIgnoreCase))
            {
                selection |= Everything;
                continue;
            }
            var analysis =
                Selectable.FirstOrDefault(a => string.Equals(a.Name, part, StringComparison.OrdinalIgnoreCase))
                ?? throw new ArgumentException($"unknown analysis '{part}': use {Known()}");
            selection |= Of(analysis);
        }
        if (selection.IsNone) throw new ArgumentException($"no analysis selected: use {Known()}");
        return selection;
    }

    /// <summary>Every selectable analysis ("all").</summary>
    public AnalysisSelection Everything =>
        Selectable.Aggregate(AnalysisSelection.None, (s, a) => s | Of(a));

    /// <summary>The selected analyses' names, in catalog order.</summary>
    public string Format(AnalysisSelection selection) =>
        selection.HasFlag(Everything) && (selection & ~Everything).IsNone
            ? "all"
            : selection.IsNone ? "none" : string.Join(",", Selected(selection).Select(a => a.Name));
}
