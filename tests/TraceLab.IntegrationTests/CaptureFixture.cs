using Spectre.Console;
using TraceLab.Capture.Linux;
using TraceLab.Cli.Commands;
using TraceLab.Reporting;

namespace TraceLab.IntegrationTests;

/// <summary>Runs `tracelab trace` in-process into a temporary directory and loads what it wrote.</summary>
public static class Capture
{
    public static IAnsiConsole QuietConsole() =>
        AnsiConsole.Create(new AnsiConsoleSettings
        {
            Out = new AnsiConsoleOutput(TextWriter.Null),
            Interactive = InteractionSupport.No
        });

    public sealed record Result(string Directory, RunReport Report) : IDisposable
    {
        public string TraceFile => Path.Combine(Directory, "trace.dat");

        public void Dispose()
        {
            try { System.IO.Directory.Delete(Directory, recursive: true); }
            catch (IOException) { }
        }
    }

    public static Result Trace(string workload, string scenario, params (string Key, string Value)[] overrides)
    {
        var dir = RepoPaths.NewTempDirectory($"tracelab-it-{scenario}");
        var settings = new TraceCommand.Settings(workload, scenario)
        {
            Overrides = overrides.ToDictionary(o => o.Key, o => o.Value),
            Out = dir,
            Force = true,
            BufferKb = 64 * 1024,
            Syscalls = SyscallSet.Lock,
            TimeoutSeconds = 300,
        };
        var code = new TraceCommand(QuietConsole()).RunAsync(settings).GetAwaiter().GetResult();
        if (code != 0) throw new InvalidOperationException($"trace {workload} {scenario} exited {code}");
        var report = ReportJson.Deserialize(File.ReadAllText(Path.Combine(dir, "report.json")));
        return new Result(dir, report);
    }
}
