using Spectre.Console;

namespace TraceLab.Cli;

/// <summary>
/// The columns the terminal report may use: at most <see cref="TerminalLineFit.Width"/>
/// (docs/metrics.md#terminal-width). Tables wider than that are shrunk by the console (cells wrap), long lines wrapped.
/// </summary>
public static class TerminalWidth
{
    /// <summary>
    /// Limits <paramref name="console"/> to the rule's width. Output redirected to a file or a pipe has no width of
    /// its own and gets exactly the rule's; a terminal narrower than that keeps its own width.
    /// </summary>
    public static IAnsiConsole Limit(IAnsiConsole console, bool redirected)
    {
        console.Profile.Width = redirected
            ? TerminalLineFit.Width
            : Math.Min(console.Profile.Width, TerminalLineFit.Width);
        return console;
    }
}
