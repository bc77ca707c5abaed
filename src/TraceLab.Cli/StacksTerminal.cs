using System.Globalization;
using Spectre.Console;
using TraceLab.Reporting.Stacks;

namespace TraceLab.Cli;

/// <summary>
/// The lock stacks on the terminal: per top lock object its name and address, then its top 3 blocking and releasing
/// stacks (count, time, frames innermost first); report.json has every lock and stack.
/// </summary>
public static class StacksTerminal
{
    /// <summary>Lock objects shown.</summary>
    public const int TopLocks = 5;

    /// <summary>Stacks shown per lock and side.</summary>
    public const int TopStacks = 3;

    private const int Width = 160;

    public static void Write(IAnsiConsole console, StacksSection? stacks)
    {
        if (stacks is null) return;
        console.MarkupLine(Markup.Escape(string.Create(CultureInfo.InvariantCulture,
            $"Lock stacks: {stacks.EventsWithStacks:N0} events with stacks, {stacks.DistinctStacks:N0} distinct; " +
            $"{stacks.UnsymbolizedFrames:N0} of {stacks.Frames:N0} frames without a function name")));
        foreach (var l in stacks.Locks.Where(l => l.Waits > 0).Take(TopLocks))
        {
            console.MarkupLine(Markup.Escape(Fit(string.Create(CultureInfo.InvariantCulture,
                $" {l.Name}  (futex {l.Address}, pid {l.Process})  " +
                $"{l.Waits:N0} wait{(l.Waits == 1 ? "" : "s")}, {l.WaitMs:0.###} ms"))));
            Side(console, "blocked in", l.Blocking);
            Side(console, "released by", l.Releasing);
        }

        foreach (var note in stacks.Notes) console.MarkupLine($"[yellow]note:[/] {Markup.Escape(note)}");
    }

    private static void Side(IAnsiConsole console, string label, List<StackEntry> entries)
    {
        foreach (var s in entries.Take(TopStacks))
        {
            var frames = string.Join(" ← ", s.Frames.Where(f => f.Module != "[kernel.kallsyms]").Select(Name));
            console.MarkupLine(Markup.Escape(Fit(string.Create(CultureInfo.InvariantCulture,
                $"   {label} ×{s.Count:N0} {s.Ms:0.###} ms: {frames}"))));
        }
    }

    private static string Name(FrameEntry f) => f.Symbol ?? (f.Module == "[unknown]"
        ? "[unknown]"
        : Path.GetFileName(f.Module) + "+" + f.Offset);

    private static string Fit(string line) => line.Length <= Width ? line : line[..(Width - 1)] + "…";
}
