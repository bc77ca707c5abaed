namespace TraceLab.IntegrationTests;

/// <summary>
/// The Native AOT tracelab, published once per test run with the linux-x64-aot profile (as README's "Install" says)
/// into a temporary folder, and the JIT build this test assembly carries (tracelab.dll beside it) to compare with.
/// </summary>
public sealed class NativeAotBuild : IDisposable
{
    private readonly TempDirectory _publishDir = new("tracelab-aot");
    private readonly Lazy<string> _executable;

    public NativeAotBuild() => _executable = new(Publish);

    /// <summary>The published executable; publishing (a few minutes) happens at the first use.</summary>
    public string Executable => _executable.Value;

    /// <summary>The JIT build: `dotnet tracelab.dll`.</summary>
    public static string[] Jit { get; } = ["dotnet", Path.Combine(AppContext.BaseDirectory, "tracelab.dll")];

    private string Publish()
    {
        // No build server or node left running after the test; warnings are errors as in every build.
        var (code, stdout, stderr) = ProcessOutput.Run("dotnet", "publish",
            Path.Combine(RepoPaths.Root, "src", "TraceLab.Cli"), $"-p:PublishProfile={NativeAotToolchain.Profile}",
            $"-p:PublishDir={_publishDir.Path}/", "-p:UseSharedCompilation=false", "-nodeReuse:false", "-v", "q",
            "-nologo");
        var exe = Path.Combine(_publishDir.Path, "tracelab");
        if (code != 0 || !File.Exists(exe))
            throw new InvalidOperationException($"dotnet publish -p:PublishProfile={NativeAotToolchain.Profile} " +
                $"failed (exit {code}):\n{stdout}\n{stderr}");
        return exe;
    }

    public void Dispose() => _publishDir.Dispose();
}
