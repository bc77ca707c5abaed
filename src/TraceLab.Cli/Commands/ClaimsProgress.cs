using Spectre.Console;

namespace TraceLab.Cli.Commands;

/// <summary>
/// Progress of a claims run: a bar with the run count and the time left on an interactive terminal, one line per
/// run otherwise (redirected to a log, the lines are the record of what ran).
/// </summary>
public sealed class ClaimsProgress(IAnsiConsole console, int total, int done)
{
    private readonly IAnsiConsole _console = console;
    private int _total = total;
    private int _done = done;
    private ProgressTask? _task;

    /// <summary>More runs than planned: short points of a calibrated sweep are measured again.</summary>
    public void Add(int runs)
    {
        _total += runs;
        if (_task is not null) _task.MaxValue = Math.Max(1, _total);
    }

    /// <param name="work">
    /// Gets a callback to call after each run with the sweep's progress and time left (the bar's label) and the run
    /// itself (point, repeat, time: only in the one-line-per-run form).
    /// </param>
    public async Task<bool> RunAsync(Func<Action<string, string>, Task<bool>> work)
    {
        if (!_console.Profile.Capabilities.Interactive)
            return await work((progress, run) =>
            {
                _done++;
                _console.MarkupLine(Markup.Escape(ClaimsCommand.I($"[{_done}/{_total}] ") + progress + ": " + run));
            });
        var result = false;
        await _console.Progress()
            .Columns(new TaskDescriptionColumn { Alignment = Justify.Left }, new ProgressBarColumn(),
                new PercentageColumn(),
                new ElapsedTimeColumn())
            .StartAsync(async ctx =>
            {
                var task = ctx.AddTask("claims", maxValue: Math.Max(1, _total));
                task.Value = _done;
                _task = task;
                result = await work((progress, _) =>
                {
                    _done++;
                    task.Value = _done;
                    task.Description = Markup.Escape(ClaimsCommand.I($"{_done}/{_total} runs · ") + progress);
                });
            });
        return result;
    }
}
