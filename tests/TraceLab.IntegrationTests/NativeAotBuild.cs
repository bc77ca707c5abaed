using System.Diagnostics;

namespace TraceLab.IntegrationTests;

/// <summary>
/// The Native AOT tracelab as a linux-x64 user gets it: packed once per test run as README's "Install" says (the tool
/// package that names the per-platform packages, and the linux-x64 one, compiled ahead of time) into a temporary
/// folder and installed from there with `dotnet tool install --tool-path`; and the JIT build this test assembly
/// carries (tracelab.dll beside it) to compare with.
/// </summary>
public sealed class NativeAotBuild : IDisposable
{
    private readonly TempDirectory _dir = new("tracelab-aot-tool");
    private readonly Lazy<string> _executable;

    public NativeAotBuild() => _executable = new(PackAndInstall);

    /// <summary>The installed `tracelab` command; packing (minutes) and installing happen at the first use.</summary>
    public string Executable => _executable.Value;

    /// <summary>The folder given to `dotnet tool install --tool-path`.</summary>
    public string ToolPath => Path.Combine(_dir.Path, "tool");

    /// <summary>The folder the packages were packed into (the only package source of the install).</summary>
    public string PackagesPath => Path.Combine(_dir.Path, "packages");

    /// <summary>The JIT build: `dotnet tracelab.dll`.</summary>
    public static string[] Jit { get; } = ["dotnet", Path.Combine(AppContext.BaseDirectory, "tracelab.dll")];

    private string PackAndInstall()
    {
        var project = Path.Combine(RepoPaths.Root, "src", "TraceLab.Cli");
        // No build server or node left running after the test; warnings are errors as in every build. The linux-x64
        // package first: its restore covers the RID-less package, which then needs no build of its own.
        string[] common =
            ["-o", PackagesPath, "-p:UseSharedCompilation=false", "-nodeReuse:false", "-v", "q", "-nologo"];
        Dotnet(["pack", project, "-r", "linux-x64", .. common]);
        Dotnet(["pack", project, "--no-build", .. common]);
        // Only the packages just made: not nuget.org, which may know another `tracelab`.
        var config = Path.Combine(_dir.Path, "nuget.config");
        File.WriteAllText(config, $"""
            <?xml version="1.0" encoding="utf-8"?>
            <configuration>
              <packageSources>
                <clear />
                <add key="packed" value="{PackagesPath}" />
              </packageSources>
            </configuration>
            """);
        Dotnet(["tool", "install", "--tool-path", ToolPath, "--configfile", config, "tracelab"]);
        var exe = Path.Combine(ToolPath, "tracelab");
        if (!File.Exists(exe)) throw new InvalidOperationException($"dotnet tool install made no {exe}");
        return exe;
    }

    private void Dotnet(string[] args)
    {
        var psi = new ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
            WorkingDirectory = _dir.Path,
        };
        foreach (var a in args) psi.ArgumentList.Add(a);
        using var p = Process.Start(psi)!;
        var err = p.StandardError.ReadToEndAsync();
        var output = p.StandardOutput.ReadToEnd();
        p.WaitForExit();
        if (p.ExitCode != 0)
            throw new InvalidOperationException(
                $"dotnet {string.Join(' ', args)} failed (exit {p.ExitCode}):\n{output}\n{err.Result}");
    }

    public void Dispose() => _dir.Dispose();
}
