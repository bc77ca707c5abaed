using System.Diagnostics;
using System.Text;
using System.Text.RegularExpressions;

namespace TraceLab.IntegrationTests;

/// <summary>
/// The real executable, as a user runs it, on damaged traces of each format and on the error paths around them:
/// every run ends in exit code 0, 1 or 2 with at most one line on stderr, never a signal, a hang or a stack trace
/// (docs/testing.md#process-fuzz; tools/fuzz-process.sh runs thousands of such cases). In-process fuzz tests cannot
/// see how the process itself ends: a chart warm-up still inside Skia when an error path returned from Main ended
/// the process with SIGSEGV.
/// </summary>
public sealed partial class ProcessFuzzTests(ITestOutputHelper output, NativeAotBuild aot)
    : IClassFixture<NativeAotBuild>
{
    /// <summary>Damaged copies per seed: each of the five kinds of damage twice.</summary>
    private const int CasesPerSeed = 10;
    private static readonly TimeSpan Hang = TimeSpan.FromSeconds(120);

    [LinuxFact]
    public void Jit_build_ends_every_damaged_trace_and_error_path_in_0_1_or_2() => FuzzAndAssert(NativeAotBuild.Jit);

    [NativeAotFact]
    public void Native_aot_build_ends_every_damaged_trace_and_error_path_in_0_1_or_2() =>
        FuzzAndAssert([aot.Executable]);

    private void FuzzAndAssert(string[] tracelab)
    {
        using var dir = new TempDirectory("tracelab-process-fuzz");
        var runs = new List<(string Case, Ended Ended)>();
        var seeds = Seeds();
        var random = new Random(1);
        foreach (var seed in seeds)
        {
            var bytes = File.ReadAllBytes(seed);
            for (var i = 0; i < CasesPerSeed; i++)
            {
                var file = dir.File($"{i:00}-k{i % 5}-{Path.GetFileName(seed)}");
                File.WriteAllBytes(file, Damage(bytes, i % 5, random));
                runs.Add((Path.GetFileName(file), Run(tracelab, "analyze", file, "--out", dir.File("out"), "--force")));
            }
        }
        foreach (var (name, args) in ErrorPaths(dir, seeds[0]))
            runs.Add((name, Run(tracelab, args)));

        foreach (var (name, ended) in runs) output.WriteLine($"{ended.Code,4}  {name}  {ended.FirstLine}");
        var counts = runs.GroupBy(r => r.Ended.Code).OrderBy(g => g.Key).Select(g => $"exit {g.Key}: {g.Count()}");
        output.WriteLine($"{runs.Count} runs: {string.Join(", ", counts)}");

        var bad = runs.Where(r => r.Ended.Code is not (0 or 1 or 2) || r.Ended.StackTrace || r.Ended.ErrorLines > 1)
            .Select(r => $"{r.Case}: exit {r.Ended.Code}{(r.Ended.StackTrace ? ", stack trace" : "")}: " +
                r.Ended.Stderr).ToList();
        Assert.True(bad.Count == 0, string.Join("\n", bad));
        // The damage reached the readers: a share of the damaged files was refused with the reader's own line
        // naming the file, and some were read to a report (the fuzz is not only refused at the door).
        var damaged = runs.Take(seeds.Count * CasesPerSeed).ToList();
        var refusedByReader = damaged.Count(r => r.Ended.Code == 1 && r.Ended.FirstLine.Contains(dir.Path,
            StringComparison.Ordinal));
        Assert.True(refusedByReader >= seeds.Count, $"only {refusedByReader} damaged files were refused by a reader");
        Assert.Contains(damaged, r => r.Ended.Code == 0);
        // Each error path ends as its kind of failure says.
        Assert.Equal(2, runs.Single(r => r.Case == "missing").Ended.Code);
        Assert.Equal(1, runs.Single(r => r.Case == "empty").Ended.Code);
        Assert.Equal(1, runs.Single(r => r.Case == "text").Ended.Code);
        Assert.NotEqual(0, runs.Single(r => r.Case == "directory").Ended.Code);
        if (runs.Any(r => r.Case == "full-disk")) Assert.Equal(1, runs.Single(r => r.Case == "full-disk").Ended.Code);
    }

    /// <summary>The sample traces (trace.dat v6, perf.data) and, where present, the external ones of the other
    /// formats (trace.dat v7 with zlib, .etl, .etl.zip).</summary>
    private static List<string> Seeds()
    {
        List<string> seeds =
        [
            Path.Combine(RepoPaths.SampleTraces, "timemutex-mutex", "trace.dat"),
            Path.Combine(RepoPaths.SampleTraces, "perf-timemutex-mutex", "capture.perf.data"),
        ];
        foreach (var relative in (string[])["tracecmd/hip24_test_guest_v7zlib.dat",
                     "etw/etlparser_ShutdownPerfDiagLogger.etl", "etw/perfview_net452_x64.etl.zip"])
            if (ExternalTraces.MissingReason(relative) is null) seeds.Add(ExternalTraces.PathOf(relative));
        return seeds;
    }

    /// <summary>The five kinds of damage tools/fuzz-process.sh makes.</summary>
    private static byte[] Damage(byte[] seed, int kind, Random random)
    {
        var b = (byte[])seed.Clone();
        switch (kind)
        {
            case 0:
                return b[..random.Next(b.Length)];
            case 1:
                for (var n = random.Next(1, 17); n > 0; n--)
                    b[random.Next(random.Next(2) == 0 ? b.Length : Math.Min(b.Length, 8192))] ^=
                        (byte)(1 << random.Next(8));
                return b;
            case 2:
                {
                    var at = random.Next(b.Length);
                    Array.Clear(b, at, Math.Min(random.Next(1, 65537), b.Length - at));
                    return b;
                }
            case 3:
                {
                    var at = random.Next(b.Length);
                    random.NextBytes(b.AsSpan(at, Math.Min(random.Next(1, 4097), b.Length - at)));
                    return b;
                }
            default:
                {
                    var head = b[..random.Next(1, 65)];
                    var tail = new byte[random.Next(65537)];
                    random.NextBytes(tail);
                    return [.. head, .. tail];
                }
        }
    }

    private static IEnumerable<(string Name, string[] Args)> ErrorPaths(TempDirectory dir, string seed)
    {
        File.WriteAllBytes(dir.File("empty.dat"), []);
        File.WriteAllText(dir.File("text.dat"), "not a trace\n");
        Directory.CreateDirectory(dir.File("a-directory"));
        yield return ("missing", ["analyze", dir.File("missing.dat"), "--out", dir.File("o1")]);
        yield return ("empty", ["analyze", dir.File("empty.dat"), "--out", dir.File("o2")]);
        yield return ("text", ["analyze", dir.File("text.dat"), "--out", dir.File("o3")]);
        yield return ("directory", ["analyze", dir.File("a-directory"), "--out", dir.File("o4")]);
        yield return ("out-is-a-file", ["analyze", seed, "--out", dir.File("text.dat"), "--force"]);
        if (TmpfsMount.UnavailableReason() is null)
        {
            // A disk that fills up while the reports are written.
            var full = new TmpfsMount("size=64k");
            try
            {
                yield return ("full-disk", ["analyze", seed, "--out", Path.Combine(full.Path, "out"), "--force"]);
            }
            finally
            {
                full.Dispose();
            }
        }
    }

    /// <summary>How one run ended.</summary>
    private sealed record Ended(int Code, string Stderr, bool StackTrace)
    {
        public string FirstLine => Stderr.Split('\n')[0];
        public int ErrorLines => Stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries).Length;
    }

    private static Ended Run(string[] tracelab, params string[] args)
    {
        var psi = new ProcessStartInfo(tracelab[0])
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (var a in tracelab[1..].Concat(args)) psi.ArgumentList.Add(a);
        var err = new StringBuilder();
        using var p = new Process { StartInfo = psi };
        p.ErrorDataReceived += (_, e) =>
        {
            if (e.Data is null) return;
            lock (err) err.AppendLine(e.Data);
        };
        p.OutputDataReceived += (_, _) => { };
        p.Start();
        p.BeginErrorReadLine();
        p.BeginOutputReadLine();
        if (!p.WaitForExit(Hang))
        {
            p.Kill(entireProcessTree: true);
            p.WaitForExit();
            return new Ended(-1, $"hung: killed after {Hang.TotalSeconds:0} s", false);
        }
        // Without a time limit it also waits for the end of the redirected output.
        p.WaitForExit();
        string text;
        lock (err) text = err.ToString();
        // .NET reports a process killed by a signal as 128 + the signal, as a shell does.
        return new Ended(p.ExitCode, text.TrimEnd(), StackTraceLine().IsMatch(text));
    }

    [GeneratedRegex(@"^\s+at |Unhandled exception|--- End of", RegexOptions.Multiline)]
    private static partial Regex StackTraceLine();
}
