using System.Globalization;

namespace TraceLab.Workloads;

/// <summary>CPU lists in the kernel's notation ("0", "0,2", "0-3"), or "all".</summary>
public static class CpuList
{
    public static string? Validate(string text)
    {
        if (text == "all") return null;
        try
        {
            var cpus = Parse(text);
            var max = Environment.ProcessorCount;
            var bad = cpus.FirstOrDefault(c => c >= max, -1);
            return bad >= 0 ? $"CPU {bad} does not exist (this machine has CPUs 0-{max - 1})" : null;
        }
        catch (FormatException ex)
        {
            return ex.Message;
        }
    }

    public static IReadOnlyList<int> Parse(string text)
    {
        var cpus = new SortedSet<int>();
        foreach (var part in text.Split(','))
        {
            var range = part.Split('-');
            if (range.Length is < 1 or > 2
                || !range.All(r => int.TryParse(r, NumberStyles.None, CultureInfo.InvariantCulture, out _)))
                throw new FormatException($"'{text}' is not a CPU list (examples: all, 0, 0,1, 0-3)");
            var lo = int.Parse(range[0], CultureInfo.InvariantCulture);
            var hi = range.Length == 2 ? int.Parse(range[1], CultureInfo.InvariantCulture) : lo;
            if (hi < lo) throw new FormatException($"'{part}' is an empty range");
            for (var c = lo; c <= hi; c++) cpus.Add(c);
        }
        return cpus.ToList();
    }
}
