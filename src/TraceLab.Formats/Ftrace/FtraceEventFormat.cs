using System.Globalization;
using TraceLab.Core;

namespace TraceLab.Formats.Ftrace;

/// <summary>An event layout as described by tracefs events/SYSTEM/NAME/format.</summary>
public sealed class FtraceEventFormat
{
    private readonly Dictionary<string, FtraceField> _byName;

    private FtraceEventFormat(
        string system, string name, int id, IReadOnlyList<FtraceField> fields, string printFormat, string text)
    {
        System = system;
        Name = name;
        Id = id;
        Fields = fields;
        PrintFormat = printFormat;
        Text = text;
        _byName = new Dictionary<string, FtraceField>(StringComparer.Ordinal);
        foreach (var f in fields) _byName.TryAdd(f.Name, f);
    }

    public string System { get; }
    public string Name { get; }
    public int Id { get; }
    /// <summary>All fields in file order, common fields first.</summary>
    public IReadOnlyList<FtraceField> Fields { get; }
    public string PrintFormat { get; }
    /// <summary>The original format text (kept so a writer can reproduce it byte for byte).</summary>
    public string Text { get; }

    public FtraceField? Field(string name) => _byName.TryGetValue(name, out var f) ? f : null;

    /// <summary>Fields that follow the common_* header, in file order.</summary>
    public IEnumerable<FtraceField> EventFields => Fields.Where(f => !f.IsCommon);

    /// <exception cref="TraceFormatException">The text has no name or ID line.</exception>
    public static FtraceEventFormat Parse(string text, string system = "")
    {
        string? name = null;
        int? id = null;
        var fields = new List<FtraceField>();
        var printFormat = "";
        // Common fields come first and are separated from the event's own fields by a blank line.
        var inCommon = true;
        var seenField = false;
        foreach (var raw in text.Split('\n'))
        {
            var line = raw.TrimEnd('\r');
            if (line.StartsWith("name:", StringComparison.Ordinal))
                name = line["name:".Length..].Trim();
            else if (line.StartsWith("ID:", StringComparison.Ordinal))
                id = int.TryParse(line["ID:".Length..].Trim(), NumberStyles.Integer, CultureInfo.InvariantCulture,
                    out var n) ? n : null;
            else if (line.StartsWith("print fmt:", StringComparison.Ordinal))
                printFormat = line["print fmt:".Length..].Trim();
            else if (line.Trim().Length == 0)
            {
                if (seenField) inCommon = false;
            }
            else if (FormatFieldLine.TryParse(line, inCommon && IsCommonName(line), out var field))
            {
                fields.Add(field);
                seenField = true;
            }
        }

        if (name is null || id is null)
            throw new TraceFormatException(
                $"event format{(system.Length > 0 ? " in system " + system : "")}: expected 'name:' and 'ID:' lines");
        return new FtraceEventFormat(system, name, id.Value, fields, printFormat, text);
    }

    private static bool IsCommonName(string line) => line.Contains(" common_", StringComparison.Ordinal);
}
