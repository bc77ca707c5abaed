using System.Text;
using Spectre.Console;
using TraceLab.Cli;
using TraceLab.Core;
using TraceLab.Reporting;
using TraceLab.Reporting.Html;

namespace TraceLab.Tests.Reporting;

/// <summary>
/// `tracelab analyze` renders report.json, report.md, report.html and the terminal report of one RunReport on
/// several threads at once. Each renderer only reads the finished report and builds its own tables, whose rows are
/// made when shown: rendered side by side, many times, every rendering is the bytes a lone rendering gives. The
/// report is of a busy system (hundreds of threads in tens of processes, all analyses), so the tables whose rows
/// are built when shown have hundreds of rows, read by every renderer at the same time.
/// </summary>
public sealed class ConcurrentRenderingTests
{
    private const long Us = SystemScript.Us;
    private const int Leaders = 20, ThreadsPerLeader = 30;
    private const int FutexWaitPrivate = 0 | 128;
    private static readonly (int, string) Idle = (0, "swapper");

    /// <summary>Each leader forks its threads; each waits on its process's futex and is woken across CPUs.</summary>
    private static RunReport Busy()
    {
        var s = new SystemScript();
        var t = 0L;
        for (var l = 0; l < Leaders; l++)
        {
            (int Tid, string Name) leader = (10_000 + 100 * l, $"proc-{l}");
            for (var k = 1; k <= ThreadsPerLeader; k++, t += 60 * Us)
            {
                (int Tid, string Name) worker = (leader.Tid + k, $"proc-{l}-w{k}");
                var cpu = (l + k) % 2;
                s.Switch(t, cpu, Idle, TaskState.Running, leader);
                s.Add(KernelEvent.Fork(t + 1 * Us, cpu, leader.Tid, worker.Tid, ForkChild.Thread), leader, worker);
                s.Add(KernelEvent.WakeupNew(t + 2 * Us, cpu, leader.Tid, worker.Tid, cpu));
                s.Switch(t + 3 * Us, cpu, leader, TaskState.Interruptible, worker);
                s.Add(KernelEvent.SyscallEnter(t + 5 * Us, cpu, worker.Tid, 202, 0x1000 + l, FutexWaitPrivate));
                s.Switch(t + (10 + k % 7) * Us, cpu, worker, TaskState.Interruptible, Idle);
                s.Add(KernelEvent.Waking(t + 30 * Us, 1 - cpu, leader.Tid, worker.Tid, 1 - cpu));
                s.Switch(t + (32 + k % 5) * Us, 1 - cpu, Idle, TaskState.Running, worker);
                s.Add(KernelEvent.SyscallExit(t + 40 * Us, 1 - cpu, worker.Tid, 202, 0));
                s.Switch(t + 50 * Us, 1 - cpu, worker, TaskState.Interruptible, Idle);
            }
        }
        return s.Report();
    }

    private static string Json(RunReport r)
    {
        using var stream = new MemoryStream();
        ReportJson.Serialize(r, stream);
        return Encoding.UTF8.GetString(stream.ToArray());
    }

    private static string Html(RunReport r)
    {
        using var stream = new MemoryStream();
        HtmlReport.Write(stream, r, ReportMarkdown.Render(r), timeline: null);
        return Encoding.UTF8.GetString(stream.ToArray());
    }

    private static string Terminal(RunReport r)
    {
        var text = new StringWriter();
        var console = AnsiConsole.Create(new AnsiConsoleSettings
        {
            Out = new AnsiConsoleOutput(text),
            Ansi = AnsiSupport.No,
            ColorSystem = ColorSystemSupport.NoColors,
        });
        console.Profile.Width = 160;
        TerminalReport.Render(console, r);
        return text.ToString();
    }

    private static readonly Func<RunReport, string>[] Renderers = [Json, ReportMarkdown.Render, Html, Terminal];

    [Fact]
    public void Renderers_side_by_side_give_the_bytes_each_gives_alone()
    {
        var report = Busy();
        Assert.True(report.Threads.Count >= Leaders * ThreadsPerLeader, $"{report.Threads.Count} threads");
        Assert.NotNull(report.System);
        var alone = Renderers.Select(render => render(report)).ToArray();
        Assert.Contains($"proc-{Leaders - 1}-w{ThreadsPerLeader}", alone[0], StringComparison.Ordinal);
        // report.md: the top processes' threads, each a row built when shown, in several tables.
        var rows = alone[1].Split('\n').Count(l => l.StartsWith("| ", StringComparison.Ordinal)
            && l.Contains("-w", StringComparison.Ordinal));
        Assert.True(rows >= 3 * ThreadsPerLeader, $"{rows} rows about threads in report.md");

        // Two of each renderer, on their own threads, released together: 8 readers of the same report at once.
        const int rounds = 12;
        var jobs = Renderers.Concat(Renderers).Select((render, i) => (render, Expected: alone[i % alone.Length]))
            .ToArray();
        for (var round = 0; round < rounds; round++)
        {
            using var start = new Barrier(jobs.Length);
            var results = new string?[jobs.Length];
            var errors = new Exception?[jobs.Length];
            var threads = jobs.Select((job, i) => new Thread(() =>
            {
                start.SignalAndWait();
                try
                {
                    results[i] = job.render(report);
                }
                catch (Exception ex)
                {
                    errors[i] = ex;
                }
            })).ToArray();
            foreach (var thread in threads) thread.Start();
            foreach (var thread in threads) thread.Join();
            for (var i = 0; i < jobs.Length; i++)
            {
                Assert.Null(errors[i]);
                Assert.True(jobs[i].Expected == results[i], $"round {round}: renderer {i % Renderers.Length} differs");
            }
        }
    }
}
