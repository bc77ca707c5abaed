using System.Globalization;
using TraceLab.Reporting.Tables;

namespace TraceLab.Reporting.Stacks;

/// <summary>
/// The lock stacks as report blocks, so report.md (and report.html, made from it) and the terminal show the same:
/// per lock word with waits, its name and address, then its blocking and releasing stacks (count, time, frames
/// innermost first, kernel frames left out); report.json's <c>stacks</c> has every lock and stack.
/// </summary>
public static class StacksView
{
    /// <summary>Lock words the terminal shows; report.md shows <see cref="MarkdownLocks"/>.</summary>
    public const int TerminalLocks = 5;

    /// <summary>Lock words report.md shows.</summary>
    public const int MarkdownLocks = 20;

    /// <summary>Stacks per lock and side on the terminal; report.md shows <see cref="MarkdownStacks"/>.</summary>
    public const int TerminalStacks = 3;

    /// <summary>Stacks per lock and side in report.md.</summary>
    public const int MarkdownStacks = 5;

    /// <summary>The blocks of <paramref name="stacks"/>; null when the trace had no stacks.</summary>
    public static IReadOnlyList<ReportBlock>? View(StacksSection? stacks)
    {
        if (stacks is null) return null;
        var inv = CultureInfo.InvariantCulture;
        var summary = string.Create(inv,
            $"{stacks.EventsWithStacks:N0} events with stacks, {stacks.DistinctStacks:N0} distinct; " +
            $"{stacks.UnsymbolizedFrames:N0} of {stacks.Frames:N0} frames without a function name");
        if (stacks.UnwoundStacks is { } unwound)
            summary += string.Create(inv, $"; {unwound:N0} user stacks unwound from copies, " +
                $"{stacks.UnwoundShort ?? 0:N0} of them stopped before the outermost frame");
        if (stacks.StackFile is { } file)
        {
            summary += string.Create(inv, $"; stacks recorded by perf in {file.File}: {file.Joined:N0} events given " +
                $"one of its {file.Recorded:N0}, lost {file.Lost:N0}");
            if (file.Damage is not null) summary += $" (damaged: {file.Damage})";
        }

        var locks = stacks.Locks.Where(l => l.Waits > 0).ToList();
        var blocks = new List<ReportBlock>
        {
            new MarkdownText("## Lock stacks", "",
                $"{summary}. Per lock word (named by its variable, else its call site, else its address: " +
                "docs/metrics.md#lock-name), the stacks that waited on it and the ones that released those waits, " +
                "innermost frame first, kernel frames left out; report.json `stacks` has every lock and stack.", ""),
            new TerminalLine(Format.Escape("Lock stacks: " + summary)),
        };
        for (var i = 0; i < locks.Count && i < MarkdownLocks; i++)
        {
            var l = locks[i];
            var named = l.NameKind == "address"
                ? $"futex {l.Address} (pid {l.Process})"
                : $"{l.Name} (futex {l.Address}, pid {l.Process})";
            var title = string.Create(inv,
                $"{named}: {l.Waits:N0} wait{(l.Waits == 1 ? "" : "s")}, {l.WaitMs:0.###} ms");
            List<string> md = [$"### {Md(title)}", ""];
            md.AddRange(MdSide("blocked in", l.Blocking));
            md.AddRange(MdSide("released by", l.Releasing));
            md.Add("");
            blocks.Add(new MarkdownText([.. md]));
            if (i >= TerminalLocks) continue;
            blocks.Add(new TerminalLine(Format.Escape(" " + title)));
            foreach (var s in Side("blocked in", l.Blocking, TerminalStacks).Concat(
                Side("released by", l.Releasing, TerminalStacks)))
                blocks.Add(new TerminalLine(Format.Escape("   " + s)));
        }
        if (locks.Count > MarkdownLocks)
            blocks.Add(new MarkdownText($"… {locks.Count - MarkdownLocks:N0} more lock words: report.json.", ""));
        foreach (var note in stacks.Notes)
        {
            blocks.Add(new MarkdownText($"Note: {Md(note)}", ""));
            blocks.Add(new TerminalLine($"[yellow]note:[/] {Format.Escape(note)}"));
        }
        return blocks;
    }

    private static IEnumerable<string> Side(string label, List<StackEntry> entries, int top) =>
        entries.Take(top).Select(s => $"{Head(label, s)}: {Frames(s)}");

    /// <summary>report.md's lines of one side: the frames as code, so symbols read literally.</summary>
    private static IEnumerable<string> MdSide(string label, List<StackEntry> entries) =>
        entries.Take(MarkdownStacks).Select(s => $"- {Head(label, s)}: `{Md(Frames(s))}`");

    private static string Head(string label, StackEntry s) =>
        string.Create(CultureInfo.InvariantCulture, $"{label} ×{s.Count:N0} {s.Ms:0.###} ms");

    private static string Frames(StackEntry s) =>
        string.Join(" ← ", s.Frames.Where(f => f.Module != "[kernel.kallsyms]").Select(Name));

    /// <summary>"update_stats (lock_sites.c:41)"; an inlined function "take_stats_lock (inlined, lock_sites.c:31)".
    /// </summary>
    private static string Name(FrameEntry f)
    {
        var name = f.Symbol ?? (f.Module == "[unknown]" ? "[unknown]" : Path.GetFileName(f.Module) + "+" + f.Offset);
        var line = f.File is { } file && f.Line is { } number
            ? $"{Path.GetFileName(file)}:{number.ToString(System.Globalization.CultureInfo.InvariantCulture)}"
            : null;
        return f.Inlined == true
            ? name + (line is null ? " (inlined)" : $" (inlined, {line})")
            : name + (line is null ? "" : $" ({line})");
    }

    /// <summary>Text for report.md: a backquote would open a code span there.</summary>
    private static string Md(string text) => text.Replace("`", "'", StringComparison.Ordinal);
}
