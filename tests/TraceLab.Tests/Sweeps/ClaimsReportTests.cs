using System.Globalization;
using TraceLab.Sweeps;
using TraceLab.Sweeps.Claims;
using TraceLab.TestSupport;
using Xunit;

namespace TraceLab.Tests.Sweeps;

/// <summary>The claims report on hand-made results folders whose verdicts are known from the numbers put in.</summary>
public sealed class ClaimsReportTests
{
    private static readonly MachineInfo Here = new(2, "here", "Linux", "6.1", ".NET");

    private static double X(SweepPoint p) => double.Parse(p.X, CultureInfo.InvariantCulture);

    /// <summary>tm1: cs 10 ms (+1 ms per repeat), mutex 1 s: cs entirely below at every thread count.</summary>
    private static void Tm1Reproduced(string dir) => HandMadeResults.Write(dir, "tm1", (p, r) =>
        p.Values["which"] == "1"
        ? HandMadeResults.Elapsed(0.010 + 0.001 * r, system: 0.001)
        : HandMadeResults.Elapsed(1.0 + 0.01 * r, system: 0.5));

    /// <summary>tm6: yielding while holding (1) 1 s, after releasing (2) 3 s: the opposite of the claim.</summary>
    private static void Tm6Inverted(string dir) => HandMadeResults.Write(dir, "tm6", (p, r) =>
        HandMadeResults.Elapsed(p.X is "2" or "3" ? 3.0 + 0.01 * r : 1.0 + 0.01 * r));

    /// <summary>th1 on 2 CPUs: best at 2 active, slower at 4, flat from 4 and unthrottled; invol rises 2 → 4.</summary>
    private static void Th1Reproduced(string dir) => HandMadeResults.Write(dir, "th1", (p, r) =>
    {
        var active = X(p);
        var elapsed = active == 1 ? 2.0 : active == 2 ? 1.0 : 1.5;
        return HandMadeResults.Elapsed(elapsed + 0.001 * r, invol: active == 0 ? 6400 : (long)active * 100 + r);
    });

    [Fact]
    public void Known_verdicts_come_out_with_their_figures_and_unmeasured_claims_say_so()
    {
        using var tmp = new TempDirectory("claims-report");
        Tm1Reproduced(tmp.Path);
        Tm6Inverted(tmp.Path);
        HandMadeResults.Log(tmp.Path, 2);

        var report = ClaimsReportBuilder.Build(tmp.Path, quick: false, Here);
        Assert.Equal(19, report.Claims.Count);
        Assert.Equal(ClaimCatalog.All.Select(c => c.Id), report.Claims.Select(c => c.Claim.Id));
        var tm1 = report.Claims.Single(c => c.Claim.Id == "TM1");
        Assert.Equal("reproduced", tm1.Outcome);
        Assert.Equal(2, tm1.Aspects.Count);
        // The figures behind it: cs's median 11 ms and mutex's 1.01 s at a compared point.
        Assert.Contains(tm1.Aspects[0].Evidence, e => e.Contains("0.011") && e.Contains("1.01"));
        Assert.Equal(24, tm1.Sweep.RunsOk);
        Assert.True(tm1.Sweep.Complete);
        Assert.Equal("inverted", report.Claims.Single(c => c.Claim.Id == "TM6").Outcome);
        foreach (var id in new[] { "TM2", "TM3", "TM5", "SR1", "TP3" })
            Assert.Equal(ClaimResult.NotMeasured, report.Claims.Single(c => c.Claim.Id == id).Outcome);
        Assert.Equal(HandMadeResults.Start, report.FirstRunUtc);
        // 24 runs per sweep, one second apart.
        Assert.Equal(HandMadeResults.Start.AddSeconds(23), report.LastRunUtc);
        Assert.Equal("test CPU", report.Machine!.CpuModel);
    }

    [Fact]
    public void An_aspect_that_needs_a_trace_does_not_turn_a_decided_claim_into_not_reproduced()
    {
        using var tmp = new TempDirectory("claims-th2");
        Th1Reproduced(tmp.Path);
        var report = ClaimsReportBuilder.Build(tmp.Path, quick: false, Here);
        var th2 = report.Claims.Single(c => c.Claim.Id == "TH2");
        Assert.Equal("reproduced", th2.Outcome);
        Assert.Contains(th2.Aspects, a => a.OutcomeText == "not tested" && a.Evidence.Any(e => e.Contains("--trace")));
        Assert.Equal("reproduced", report.Claims.Single(c => c.Claim.Id == "TH1").Outcome);
    }

    [Fact]
    public void Claims_the_machine_cannot_decide_say_why_and_what_a_larger_machine_would_have_to_show()
    {
        using var tmp = new TempDirectory("claims-decide");
        Th1Reproduced(tmp.Path);
        Tm1Reproduced(tmp.Path);
        HandMadeResults.Write(tmp.Path, "tm9", (p, r) => HandMadeResults.Elapsed(X(p) + 0.01 * r));
        HandMadeResults.Log(tmp.Path, 2,
            HandMadeResults.Window("th1", foreign: 0.6), HandMadeResults.Window("tm9", foreign: 0.1));
        var report = ClaimsReportBuilder.Build(tmp.Path, quick: false, Here);

        var tm4 = report.Claims.Single(c => c.Claim.Id == "TM4");
        Assert.False(tm4.Decidable);
        Assert.Equal("no: needs ≥ 4 CPUs", tm4.Decision);
        Assert.Contains("this machine has 2", tm4.Why);
        var th1 = report.Claims.Single(c => c.Claim.Id == "TH1");
        Assert.False(th1.Decidable);
        Assert.Equal("no: others used 60 % of the CPUs", th1.Decision);
        // Other processes' share below the limit: decided; nothing recorded: decided only if the CPUs were idle.
        Assert.True(report.Claims.Single(c => c.Claim.Id == "TM9").Decidable);
        Assert.Equal("yes (others used 10 % of the CPUs)", report.Claims.Single(c => c.Claim.Id == "TM9").Decision);
        Assert.Equal("yes, if the CPUs were idle", report.Claims.Single(c => c.Claim.Id == "TM8").Decision);
        Assert.Equal("yes", report.Claims.Single(c => c.Claim.Id == "TM1").Decision);

        // The same results from a 16-CPU machine: TM4 is decidable there.
        HandMadeResults.Log(tmp.Path, 16);
        Assert.True(ClaimsReportBuilder.Build(tmp.Path, false, Here).Claims.Single(c => c.Claim.Id == "TM4").Decidable);
    }

    [Fact]
    public void Markdown_has_the_table_the_machine_the_load_and_the_larger_machine_section()
    {
        using var tmp = new TempDirectory("claims-md");
        Tm1Reproduced(tmp.Path);
        Th1Reproduced(tmp.Path);
        HandMadeResults.Log(tmp.Path, 2, HandMadeResults.Window("th1", foreign: 0.6));
        var md = ClaimsReportMarkdown.Write(ClaimsReportBuilder.Build(tmp.Path, false, Here),
            HandMadeResults.Start.AddHours(1));

        Assert.Contains("| [TM1](claims.md#TM1) | **reproduced** | `timemutex tm1` | 24 / 24 |", md);
        Assert.Contains("| [TM5](claims.md#TM5) | **not measured** | `timemutex tm5` | – |", md);
        Assert.Contains("machine: 2 CPUs (test CPU), Linux, kernel 6.1-test", md);
        Assert.Contains("measured 2026-11-25 14:00 – 2026-11-25 14:00 UTC; report written 2026-11-25 15:00 UTC", md);
        Assert.Contains("1-minute load average 1.5 – 3.5 (median 2.5, 3 samples)", md);
        var undecided = md[md.IndexOf("## Claims this machine cannot decide", StringComparison.Ordinal)..];
        Assert.Contains("- **TM4** (not measured here) — needs ≥ 4 CPUs, this machine has 2", undecided);
        Assert.Contains("- **TH1** (reproduced here) — other processes used 60 % of the CPUs", undecided);
        Assert.Contains("A larger machine would have to show: with ≥ 4 CPUs", undecided);
        Assert.Contains("### TM1: reproduced", md);
        Assert.Contains("60 %", md);
    }

    [Fact]
    public void An_incomplete_sweep_is_judged_on_what_it_has_and_marked_incomplete()
    {
        using var tmp = new TempDirectory("claims-partial");
        // Repeat 2 never ran: two repeats per point are not enough for a verdict.
        HandMadeResults.Write(tmp.Path, "tm1",
            (p, r) => r == 2 ? null : HandMadeResults.Elapsed(p.Values["which"] == "1" ? 0.01 : 1));
        var report = ClaimsReportBuilder.Build(tmp.Path, false, Here);
        var tm1 = report.Claims.Single(c => c.Claim.Id == "TM1");
        Assert.Equal("insufficient repeats", tm1.Outcome);
        Assert.False(tm1.Sweep.Complete);
        Assert.Equal(16, tm1.Sweep.RunsOk);
        Assert.Contains("16 / 24 (incomplete)", ClaimsReportMarkdown.Write(report, HandMadeResults.Start));
    }

    [Fact]
    public void A_damaged_or_foreign_results_file_is_one_clear_error()
    {
        using var tmp = new TempDirectory("claims-bad");
        Directory.CreateDirectory(Path.Combine(tmp.Path, "tm1"));
        File.WriteAllText(Path.Combine(tmp.Path, "tm1", "state.json"), "{ \"points\": [ {");
        var ex = Assert.Throws<SweepException>(() => ClaimsReportBuilder.Build(tmp.Path, false, Here));
        Assert.Contains("not a valid sweep state", ex.Message);

        Tm6Inverted(tmp.Path);
        File.Copy(Path.Combine(tmp.Path, "tm6", "state.json"), Path.Combine(tmp.Path, "tm1", "state.json"),
            overwrite: true);
        ex = Assert.Throws<SweepException>(() => ClaimsReportBuilder.Build(tmp.Path, false, Here));
        Assert.Contains("holds sweep 'timemutex tm6', not 'timemutex tm1'", ex.Message);

        File.WriteAllText(Path.Combine(tmp.Path, "tm1", "state.json"), "{}");
        File.WriteAllText(Path.Combine(tmp.Path, ClaimsRunLog.FileName), "[1,2");
        Assert.Throws<SweepException>(() => ClaimsReportBuilder.Build(tmp.Path, false, Here));
    }

    [Fact]
    public void Foreign_cpu_share_is_busy_time_minus_our_runs_over_all_time()
    {
        Assert.Equal((300L, 1000L), MachineLoad.ParseCpuLine("cpu  200 0 100 600 100 0 0 0 0 0"));
        Assert.Null(MachineLoad.ParseCpuLine("cpu  x y"));
        // 2 CPUs for 10 s = 2000 ticks; 1500 busy, of which our runs used 5 s (500 ticks): others used half.
        Assert.Equal(0.5, MachineLoad.ForeignShare(1500, 2000, 5_000_000_000), 9);
        Assert.Equal(0, MachineLoad.ForeignShare(100, 2000, 5_000_000_000));
        Assert.True(MachineLoad.ReadCpuTicks() is { Total: > 0 });
    }
}

/// <summary>Damaged results files: every variant gives a report or one SweepException, never anything else.</summary>
public sealed class ClaimsReportFuzzTests(Xunit.Abstractions.ITestOutputHelper output)
{
    [Fact]
    public void Thousands_of_damaged_state_and_run_log_files_give_a_report_or_one_clear_error()
    {
        using var tmp = new TempDirectory("claims-fuzz");
        HandMadeResults.Write(tmp.Path, "tm1", (p, r) => HandMadeResults.Elapsed(p.Values["which"] == "1" ? 0.01 : 1));
        HandMadeResults.Log(tmp.Path, 2, HandMadeResults.Window("tm1", 0.3));
        var statePath = Path.Combine(tmp.Path, "tm1", "state.json");
        var logPath = Path.Combine(tmp.Path, ClaimsRunLog.FileName);
        var originals = new Dictionary<string, byte[]>
        {
            [statePath] = File.ReadAllBytes(statePath),
            [logPath] = File.ReadAllBytes(logPath),
        };
        var random = new Random(22);
        int reports = 0, errors = 0;
        for (var i = 0; i < 3000; i++)
        {
            var target = i % 3 == 0 ? logPath : statePath;
            foreach (var (path, bytes) in originals) File.WriteAllBytes(path, bytes);
            File.WriteAllBytes(target, Damage(originals[target], random));
            try
            {
                var machine = new MachineInfo(2, null, "Linux", null, ".NET");
                ClaimsReportMarkdown.Write(ClaimsReportBuilder.Build(tmp.Path, false, machine), HandMadeResults.Start);
                reports++;
            }
            catch (SweepException e)
            {
                // The one line the CLI prints: it names the damaged file (or the sweep folder holding it) and has no
                // line break of its own.
                Assert.False(e.Message.Contains('\n', StringComparison.Ordinal), e.Message);
                Assert.Contains(Path.GetDirectoryName(target)!, e.Message, StringComparison.Ordinal);
                errors++;
            }
        }
        output.WriteLine($"3000 damaged variants: {reports} reports, {errors} one-line errors");
        // Any other exception ends the loop above and fails the test. The seed fixes the variants, so the split is
        // exact: a load that stopped checking state.json's structure (SweepStateStore.Damage) would report
        // damaged files instead of refusing them, and a load that refused intact values would refuse more.
        Assert.Equal((430, 2570), (reports, errors));
    }

    /// <summary>Truncation, a flipped byte, a deleted or duplicated span, or a JSON value of another kind.</summary>
    private static byte[] Damage(byte[] original, Random random)
    {
        var b = original.ToList();
        switch (random.Next(5))
        {
            case 0: return [.. b.Take(random.Next(b.Count))];
            case 1: b[random.Next(b.Count)] = (byte)random.Next(256); return [.. b];
            case 2:
                var at = random.Next(b.Count);
                b.RemoveRange(at, Math.Min(b.Count - at, random.Next(1, 40)));
                return [.. b];
            case 3:
                var from = random.Next(b.Count);
                b.InsertRange(random.Next(b.Count), b.Skip(from).Take(random.Next(1, 60)).ToList());
                return [.. b];
            default:
                var text = System.Text.Encoding.UTF8.GetString(original);
                var values = new[] { "null", "-1", "999999", "\"x\"", "[]", "{}", "1e308", "true" };
                var colon = text.IndexOf(':', random.Next(text.Length));
                if (colon < 0) return original;
                var end = text.IndexOfAny([',', '\n', '}'], colon + 1);
                if (end < 0) return original;
                var value = values[random.Next(values.Length)];
                return System.Text.Encoding.UTF8.GetBytes(text[..(colon + 1)] + " " + value + text[end..]);
        }
    }
}
