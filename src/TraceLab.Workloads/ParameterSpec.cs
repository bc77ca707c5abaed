using System.Globalization;

namespace TraceLab.Workloads;

/// <summary>One workload parameter: its CLI option, range and how it reaches the native program.</summary>
public sealed record ParameterSpec(string Name, string Description, long Min, long Max, long Default)
{
    /// <summary>Named values accepted in place of numbers (e.g. which=mutex).</summary>
    public IReadOnlyDictionary<string, long> Names { get; init; } = new Dictionary<string, long>();

    /// <summary>Free text (validated by <see cref="Validate"/>) instead of an integer, e.g. a CPU list.</summary>
    public Func<string, string?>? TextValidator { get; init; }

    public string? DefaultText { get; init; }

    public bool IsText => TextValidator is not null;

    /// <summary>
    /// Normalizes a value: returns the canonical text or throws <see cref="WorkloadException"/> with a one-line reason.
    /// </summary>
    public string Validate(string value)
    {
        if (TextValidator is not null)
        {
            var error = TextValidator(value);
            if (error is not null) throw new WorkloadException($"--{Name} {value}: {error}");
            return value;
        }
        if (Names.TryGetValue(value, out var named)) return named.ToString(CultureInfo.InvariantCulture);
        if (!long.TryParse(value, NumberStyles.Integer, CultureInfo.InvariantCulture, out var n))
        {
            var names = Names.Count > 0 ? $" or one of {string.Join(", ", Names.Keys)}" : "";
            throw new WorkloadException($"--{Name} {value}: expected an integer{names}");
        }
        if (n < Min || n > Max) throw new WorkloadException($"--{Name} {value}: must be between {Min} and {Max}");
        return n.ToString(CultureInfo.InvariantCulture);
    }
}
