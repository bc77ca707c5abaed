using Spectre.Console;
using TraceLab.Capture.Linux;
using TraceLab.Cli.Commands;

namespace TraceLab.IntegrationTests;

/// <summary>
/// Issue "Reliability", privileges and environment: an event this kernel lacks, on a real tracefs instance. The
/// event list is injected; everything else (instance, formats, copy, trace.dat, report) is the real capture.
/// </summary>
public sealed class EnvironmentFailureTests
{
    private const string Bogus = "sched/sched_tracelab_no_such_event";

    [TracingFact(needsWorkloads: false)]
    public void A_missing_event_is_skipped_and_listed_and_the_capture_still_works()
    {
        using var work = new TempDirectory("tracelab-missing-event");
        var before = GlobalTracingState.Read();
        RawCapture raw;
        using (var session = LinuxCaptureSession.Start(new LinuxCaptureOptions
        {
            RunId = "missing-" + Guid.NewGuid().ToString("N")[..8],
            WorkDirectory = work.Path,
            BufferSizeKb = 1024,
            Events = [.. CaptureEventSet.Scheduler, Bogus],
        }))
        {
            Assert.Equal([Bogus], session.MissingEvents);
            Thread.Sleep(50);   // let something be scheduled
            raw = session.Stop();
            Assert.DoesNotContain(session.InstanceName, Instances.Names());
        }

        Assert.Equal([Bogus], raw.MissingEvents);
        Assert.DoesNotContain(Bogus, raw.EventFormats.Keys);
        Assert.Contains("sched/sched_switch", raw.EventFormats.Keys);
        var trace = Path.Combine(work.Path, "trace.dat");
        raw.WriteTraceDat(trace);
        raw.DeleteRawFiles();
        using var reader = TraceLab.Formats.TraceDat.TraceDatReader.Open(trace);
        var count = new CountingSink();
        reader.Read(count);
        Assert.True(count.Switches > 0, "no sched_switch captured");
        Assert.Equal(before, GlobalTracingState.Read());
    }

    [TracingFact(needsWorkloads: false)]
    public void Without_sched_switch_the_capture_refuses_in_one_line_and_leaves_no_instance()
    {
        using var work = new TempDirectory("tracelab-no-switch");
        var runId = "noswitch-" + Guid.NewGuid().ToString("N")[..8];
        var ex = Assert.Throws<TracingUnavailableException>(() => LinuxCaptureSession.Start(new LinuxCaptureOptions
        {
            RunId = runId,
            WorkDirectory = work.Path,
            BufferSizeKb = 1024,
            Events = ["sched/sched_waking", Bogus],
        }));
        Assert.Equal("this kernel has no sched:sched_switch tracepoint; TraceLab cannot account scheduling without it",
            ex.Message);
        Assert.DoesNotContain(Instances.Names(), n => n.EndsWith(runId, StringComparison.Ordinal));
        Assert.Empty(Directory.GetFiles(work.Path, ".cpu*.raw"));
    }

    [TracingFact]
    public async Task Trace_warns_about_the_missing_event_and_still_reports()
    {
        using var output = new TempDirectory("tracelab-missing-trace");
        var console = new StringWriter();
        var ansi = AnsiConsole.Create(new AnsiConsoleSettings
        {
            Out = new AnsiConsoleOutput(console),
            Interactive = InteractionSupport.No,
            Ansi =
                AnsiSupport.No,
            ColorSystem = ColorSystemSupport.NoColors,
        });
        ansi.Profile.Width = 400;
        var backend = new TracefsCaptureBackend([.. CaptureEventSet.For(SyscallSet.Lock), Bogus]);
        var settings = new TraceCommand.Settings("timemutex", "mutex")
        {
            Overrides = new Dictionary<string, string> { ["iterations"] = "2000" },
            Out = output.Path,
            Force = true,
            BufferKb = 4096,
            Syscalls = SyscallSet.Lock,
            TimeoutSeconds = 60,
        };

        var exit = await new TraceCommand(ansi, backend).RunAsync(settings);

        Assert.Equal(0, exit);
        Assert.Contains(
            $"warning: this kernel has no {Bogus} event; skipped", console.ToString(), StringComparison.Ordinal);
        Assert.True(File.Exists(Path.Combine(output.Path, "report.json")));
    }

    private sealed class CountingSink : TraceLab.Core.IKernelEventSink
    {
        public long Switches;
        public void OnEvent(in TraceLab.Core.KernelEvent e)
        {
            if (e.Kind == TraceLab.Core.KernelEventKind.Switch) Switches++;
        }
    }
}
