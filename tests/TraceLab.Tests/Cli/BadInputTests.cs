namespace TraceLab.Tests.Cli;

/// <summary>
/// The real `tracelab` program given bad input: one line on stderr, the documented exit code, no stack trace.
/// </summary>
public sealed class BadInputTests
{
    private static readonly string Tool = Path.Combine(AppContext.BaseDirectory, "tracelab.dll");

    private static (int Code, string Out, string Err) Run(params string[] args) =>
        ProcessOutput.Run("dotnet", [Tool, .. args]);

    private static void AssertOneLineError(string err, string expected)
    {
        var lines = err.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Single(lines);
        Assert.StartsWith("tracelab: ", lines[0]);
        Assert.Contains(expected, lines[0]);
        Assert.DoesNotContain("   at ", err);
    }

    [Fact]
    public void Unknown_workload_lists_the_valid_ones_and_exits_2()
    {
        var (code, _, err) = Run("trace", "nosuch", "cs");
        Assert.Equal(2, code);
        AssertOneLineError(err, "valid workloads are timemutex");
    }

    [Fact]
    public void Unknown_scenario_lists_the_valid_ones_and_exits_2()
    {
        var (code, _, err) = Run("trace", "timemutex", "nosuch");
        Assert.Equal(2, code);
        AssertOneLineError(err, "valid scenarios are cs, cs-nested, mutex");
    }

    [Theory]
    [InlineData("--threads", "65", "must be between 1 and 64")]
    [InlineData("--which", "banana", "expected an integer or one of cs, cs-nested, mutex, event, semaphore")]
    [InlineData("--sleep-points", "4", "must be between 0 and 3")]
    [InlineData("--affinity", "0-999", "does not exist")]
    [InlineData("--syscalls", "some", "unknown syscall set")]
    public void Out_of_range_parameter_is_refused_before_anything_runs(string option, string value, string expected)
    {
        var (code, _, err) = Run("trace", "timemutex", "cs", option, value, "--out",
            Path.Combine(Path.GetTempPath(), "never-" + Guid.NewGuid()));
        Assert.Equal(2, code);
        AssertOneLineError(err, expected);
    }

    [Theory]
    [InlineData("analyze")]
    [InlineData("bench")]
    public void Analysis_threads_out_of_range_is_refused(string command)
    {
        var trace = Path.Combine(RepoPaths.SampleTraces, "timemutex-cs", "trace.dat");
        string[] args = command == "analyze"
            ? [command, trace, "--analysis-threads", "7", "--out",
                Path.Combine(Path.GetTempPath(), "never-" + Guid.NewGuid())]
            : [command, trace, "--analysis-threads", "7"];
        var (code, _, err) = Run(args);
        Assert.Equal(2, code);
        AssertOneLineError(err, "--analysis-threads must be between 0 and 6");
    }

    /// <summary>A --pid that is not one number is a usage error, not the parser's exception.</summary>
    [Theory]
    [InlineData("1,2")]
    [InlineData("abc")]
    public void Analyze_pid_that_is_not_one_number_is_a_usage_error(string pid)
    {
        var trace = Path.Combine(RepoPaths.SampleTraces, "timemutex-cs", "trace.dat");
        var (code, _, err) = Run("analyze", trace, "--pid", pid, "--out",
            Path.Combine(Path.GetTempPath(), "never-" + Guid.NewGuid()));
        Assert.Equal(2, code);
        AssertOneLineError(err, $"--pid takes one process id, not '{pid}'");
    }

    [Theory]
    [InlineData("abc")]
    [InlineData("12,,34")]
    [InlineData("-5")]
    public void Analyze_exclude_pid_that_is_not_a_pid_list_is_a_usage_error(string pids)
    {
        var trace = Path.Combine(RepoPaths.SampleTraces, "timemutex-cs", "trace.dat");
        var (code, _, err) = Run("analyze", trace, "--exclude-pid", pids, "--out",
            Path.Combine(Path.GetTempPath(), "never-" + Guid.NewGuid()));
        Assert.Equal(2, code);
        AssertOneLineError(err, $"--exclude-pid takes process ids separated by commas, not '{pids}'");
    }

    /// <summary>
    /// A tag file with a line that is not a class and a pattern, or no file at all: one line naming the file (and
    /// line), exit 2, and no output directory made.
    /// </summary>
    [Fact]
    public void Analyze_wait_tags_that_cannot_be_read_is_a_usage_error()
    {
        var trace = Path.Combine(RepoPaths.SampleTraces, "timemutex-cs", "trace.dat");
        var tags = Path.Combine(Path.GetTempPath(), "tracelab-tags-" + Guid.NewGuid() + ".tags");
        var outDir = Path.Combine(Path.GetTempPath(), "never-" + Guid.NewGuid());
        File.WriteAllText(tags, "# mine\nlock MyMutex::lock\nmutex pthread_mutex_lock\n");
        try
        {
            var (code, _, err) = Run("analyze", trace, "--wait-tags", tags, "--out", outDir);
            Assert.Equal(2, code);
            AssertOneLineError(err, $"{tags}:3: expected a class (lock, condition, io, commit, sleep, memory, " +
                "unknown) and one function name pattern, not 'mutex pthread_mutex_lock'");
            (code, _, err) = Run("analyze", trace, "--wait-tags", tags + ".missing", "--out", outDir);
            Assert.Equal(2, code);
            AssertOneLineError(err, $"{tags}.missing: no such file");
            Assert.False(Directory.Exists(outDir));
        }
        finally
        {
            File.Delete(tags);
        }
    }

    [Fact]
    public void Trace_exclude_pid_that_is_not_a_pid_list_is_a_usage_error()
    {
        var (code, _, err) = Run("trace", "--system", "--duration", "1", "--exclude-pid", "tracelab");
        Assert.Equal(2, code);
        AssertOneLineError(err, "--exclude-pid takes process ids separated by commas, not 'tracelab'");
    }

    [Fact]
    public void Unknown_option_is_a_usage_error()
    {
        var (code, _, err) = Run("trace", "timemutex", "cs", "--bogus");
        Assert.Equal(2, code);
        AssertOneLineError(err, "--bogus");
    }

    [Fact]
    public void Existing_output_directory_is_refused_without_force_and_left_untouched()
    {
        using var dir = new TempDirectory("tracelab-existing");
        var keep = dir.File("precious.txt");
        File.WriteAllText(keep, "user data");
        var (code, _, err) = Run("trace", "timemutex", "cs", "--out", dir.Path);
        Assert.Equal(2, code);
        AssertOneLineError(err, "add --force");
        Assert.Equal("user data", File.ReadAllText(keep));
        Assert.Single(Directory.GetFileSystemEntries(dir.Path));
    }

    [Fact]
    public void Bench_generate_threads_never_replaces_a_file()
    {
        var path = Path.Combine(Path.GetTempPath(), "tracelab-generate-" + Guid.NewGuid() + ".dat");
        File.WriteAllText(path, "user data");
        try
        {
            var (code, _, err) = Run("bench", path, "--generate-threads", "5");
            Assert.Equal(2, code);
            AssertOneLineError(err, "already exists");
            Assert.Equal("user data", File.ReadAllText(path));
        }
        finally
        {
            File.Delete(path);
        }
    }

    [Fact]
    public void Analyze_of_a_missing_file_exits_2()
    {
        var (code, _, err) = Run("analyze", "/nonexistent/trace.dat");
        Assert.Equal(2, code);
        AssertOneLineError(err, "no such file");
    }

    [Fact]
    public void Analyze_of_a_file_that_is_not_a_trace_names_the_file_and_exits_1()
    {
        using var dir = new TempDirectory("tracelab-notrace");
        var file = dir.File("trace.dat");
        File.WriteAllText(file, "this is not a trace");
        var (code, _, err) = Run("analyze", file, "--out", dir.File("out"));
        Assert.Equal(1, code);
        AssertOneLineError(err, file);
    }

    [Theory]
    [InlineData("-1", "--top must be between 0 and 100")]
    [InlineData("101", "--top must be between 0 and 100")]
    [InlineData("three", "three")]
    public void A_bad_top_is_one_line_and_exit_2(string value, string expected)
    {
        var trace = Path.Combine(RepoPaths.SampleTraces, "timemutex-cs", "trace.dat");
        using var dir = new TempDirectory("tracelab-top");
        var (code, _, err) = Run("analyze", trace, "--out", dir.File("out"), "--top", value);
        Assert.Equal(2, code);
        AssertOneLineError(err, expected);
        Assert.False(Directory.Exists(dir.File("out")) && Directory.EnumerateFiles(dir.File("out")).Any());

        (code, _, err) = Run("trace", "--system", "--top", value);
        Assert.Equal(2, code);
        AssertOneLineError(err, expected);
    }

    [Fact]
    public void Top_with_a_target_is_refused()
    {
        var (code, _, err) = Run("trace", "--pid", "1", "--top", "2");
        Assert.Equal(2, code);
        AssertOneLineError(err, "--top applies to --system");
    }

    [Fact]
    public void A_file_that_is_not_a_trace_is_told_which_formats_are_read()
    {
        using var dir = new TempDirectory("tracelab-notrace");
        var file = dir.File("capture.etl");
        File.WriteAllText(file, "an .etl name does not make an .etl file");
        var (code, _, err) = Run("analyze", file, "--out", dir.File("out"));
        Assert.Equal(1, code);
        AssertOneLineError(err, "not a trace TraceLab reads: expected trace.dat (");
        Assert.Contains("perf.data (magic PERFILE2), etl (ETW", err);
        Assert.Contains("or etl.zip (a zip archive (PK 03 04) holding one .etl, as PerfView writes)", err);
    }

    [Fact]
    public void An_etl_is_recognised_by_its_content_whatever_its_name()
    {
        using var dir = new TempDirectory("tracelab-etl");
        var file = dir.File("trace.dat");
        File.WriteAllBytes(file, Capture.FakeEtwController.HeaderBuffer);
        var (code, _, err) = Run("analyze", file, "--out", dir.File("out"));
        Assert.Equal(1, code);
        // Read by the managed .etl reader (not as a trace.dat): the lone header buffer lacks the logfile header.
        AssertOneLineError(err, "TRACE_LOGFILE_HEADER");
    }

    [Fact]
    public void A_buffer_the_trace_dat_does_not_have_is_refused_with_the_ones_it_has()
    {
        var sample = Path.Combine(RepoPaths.SampleTraces, "timemutex-mutex", "trace.dat");
        using var dir = new TempDirectory("tracelab-buffer");
        var (code, _, err) = Run("analyze", sample, "--buffer", "nosuch", "--out", dir.File("out"));
        Assert.Equal(1, code);
        AssertOneLineError(err, "a buffer named 'nosuch'; the file has the buffers 'top'");
        Assert.False(Directory.Exists(dir.File("out")) && Directory.EnumerateFiles(dir.File("out")).Any());
    }

    [Fact]
    public void Truncated_trace_gives_one_line_with_the_offset_and_exits_1()
    {
        var sample = Path.Combine(RepoPaths.SampleTraces, "timemutex-mutex", "trace.dat");
        using var dir = new TempDirectory("tracelab-truncated");
        var file = dir.File("trace.dat");
        var bytes = File.ReadAllBytes(sample);
        File.WriteAllBytes(file, bytes[..(bytes.Length / 3)]);
        var (code, _, err) = Run("analyze", file, "--out", dir.File("out"));
        Assert.Equal(1, code);
        AssertOneLineError(err, "offset");
    }

    [Fact]
    public void Scenarios_lists_every_scenario_with_its_claims()
    {
        var (code, stdout, _) = Run("scenarios");
        Assert.Equal(0, code);
        foreach (var s in new[] { "cs", "cs-nested", "mutex", "event", "semaphore", "sleep-holding", "sleep-released",
            "many-threads", "serialized" })
            Assert.Contains(s, stdout);
        Assert.Contains("TM6", stdout);
    }
}

/// <summary>
/// TraceLab run as an unprivileged user (nobody): without root, `trace` says what privilege is needed in one line and
/// creates nothing; a path that user cannot reach gives one line and exit 1. The user runs a copy of the build output
/// in a folder it can read, since the checkout itself may sit in a 0700 home directory it cannot enter.
/// </summary>
public sealed class PrivilegeTests : IDisposable
{
    private readonly TempDirectory _tool = new("tracelab-unprivileged-tool");
    private readonly TempDirectory _private = new("tracelab-unprivileged-private");

    public PrivilegeTests()
    {
        // The tests skip elsewhere (UnprivilegedFact); file modes are POSIX.
        if (!OperatingSystem.IsLinux()) return;
        foreach (var file in Directory.EnumerateFiles(AppContext.BaseDirectory, "*", SearchOption.AllDirectories))
        {
            var copy = Path.Combine(_tool.Path, Path.GetRelativePath(AppContext.BaseDirectory, file));
            Directory.CreateDirectory(Path.GetDirectoryName(copy)!);
            File.Copy(file, copy);
        }
        // Readable by everyone (the temp folder itself is: /tmp, or TMPDIR, which the tests expect world-searchable).
        new DirectoryInfo(_tool.Path).UnixFileMode |= UnixFileMode.OtherRead | UnixFileMode.OtherExecute;
        foreach (var entry in new DirectoryInfo(_tool.Path).EnumerateFileSystemInfos("*", SearchOption.AllDirectories))
            entry.UnixFileMode |= UnixFileMode.OtherRead | (entry is DirectoryInfo ? UnixFileMode.OtherExecute : 0);
        // Only root may enter this one.
        new DirectoryInfo(_private.Path).UnixFileMode = UnixFileMode.UserRead | UnixFileMode.UserWrite |
            UnixFileMode.UserExecute;
    }

    public void Dispose()
    {
        _tool.Dispose();
        _private.Dispose();
    }

    /// <summary>
    /// Runs the copy as nobody, in the copy's folder (the test's own may be one nobody cannot enter).
    /// </summary>
    private (int Code, string Err) RunAsNobody(params string[] args)
    {
        var (code, _, err) = ProcessOutput.Run("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups",
            "env", "-C", _tool.Path, "HOME=/tmp", "DOTNET_CLI_HOME=/tmp", "DOTNET_NOLOGO=1", "dotnet",
            Path.Combine(_tool.Path, "tracelab.dll"), .. args]);
        return (code, err);
    }

    private static string OneLine(string err)
    {
        Assert.DoesNotContain("   at ", err);
        return Assert.Single(err.Split('\n', StringSplitOptions.RemoveEmptyEntries));
    }

    [UnprivilegedFact]
    public void Trace_as_an_unprivileged_user_says_root_is_needed()
    {
        var outDir = Path.Combine(Path.GetTempPath(), "never-" + Guid.NewGuid());
        var (code, err) = RunAsNobody("trace", "timemutex", "cs", "--out", outDir);
        Assert.Equal("tracelab: kernel tracing needs root (or CAP_SYS_ADMIN with tracefs access): run as root, " +
            "e.g. sudo dotnet run -- ...", OneLine(err));
        Assert.Equal(1, code);
        Assert.False(Directory.Exists(outDir));
    }

    [UnprivilegedFact]
    public void A_trace_the_user_cannot_reach_is_one_line_and_exit_1_not_no_such_file()
    {
        var trace = Path.Combine(_private.Path, "trace.dat");
        File.Copy(Path.Combine(RepoPaths.SampleTraces, "timemutex-cs", "trace.dat"), trace);
        foreach (var args in new[]
        {
            new[] { "analyze", trace, "--out", Path.Combine(Path.GetTempPath(), "never-" + Guid.NewGuid()) },
            ["export", trace, "--to", "perfetto", "-o", Path.Combine(Path.GetTempPath(), "never-" + Guid.NewGuid())],
            ["bench", trace],
        })
        {
            var (code, err) = RunAsNobody(args);
            Assert.Equal($"tracelab: {trace}: permission denied: this user cannot reach it (a directory on its path " +
                "is not searchable)", OneLine(err));
            Assert.Equal(1, code);
        }
        // A path that does not exist is still a usage error.
        var (missingCode, missingErr) = RunAsNobody("analyze", Path.Combine(_tool.Path, "none.dat"));
        Assert.EndsWith("none.dat: no such file", OneLine(missingErr).Split(" (see", 2)[0], StringComparison.Ordinal);
        Assert.Equal(2, missingCode);
    }

    [UnprivilegedFact]
    public void A_results_folder_the_user_cannot_reach_is_not_reported_as_empty()
    {
        var (code, err) = RunAsNobody("claims", "--results", _private.Path);
        Assert.StartsWith($"tracelab: {Path.Combine(_private.Path, "full")}: permission denied", OneLine(err),
            StringComparison.Ordinal);
        Assert.Equal(1, code);
    }
}

/// <summary>Needs root (to drop to nobody) and setpriv; skipped with the reason otherwise.</summary>
public sealed class UnprivilegedFactAttribute : FactAttribute
{
    public UnprivilegedFactAttribute()
    {
        var reason = TestEnvironment.UnprivilegedChildReason();
        if (reason is not null) Skip = reason;
    }
}
