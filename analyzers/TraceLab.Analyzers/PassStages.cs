namespace TraceLab.Analyzers;

/// <summary>
/// The stages of one analysis pass: state several analyzers build on (such as the lock-operation tracker) without any
/// of them owning it, one instance per type. <see cref="AnalysisPass"/> feeds each stage every event before its
/// analyzers, and resets and completes it like them.
/// </summary>
public sealed class PassStages(ThreadAccounting accounting)
{
    private IPerKindAnalyzer[] _stages = [];

    /// <summary>
    /// The pass's one stage of type <typeparamref name="T"/>, made by <paramref name="create"/> at the first request
    /// and the same instance after. Request it while making the analyzers, before the pass is built.
    /// </summary>
    public T Of<T>(Func<ThreadAccounting, T> create) where T : class, IPerKindAnalyzer
    {
        foreach (var stage in _stages)
            if (stage is T existing) return existing;
        var made = create(accounting);
        _stages = [.. _stages, made];
        return made;
    }

    /// <summary>The stages made so far, in the order they were first requested.</summary>
    internal IReadOnlyList<IPerKindAnalyzer> All => _stages;
}
