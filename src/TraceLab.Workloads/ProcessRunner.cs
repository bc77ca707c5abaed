using System.Diagnostics;

namespace TraceLab.Workloads;

/// <summary>Runs a short helper program (cmake) to completion and captures its output.</summary>
internal static class ProcessRunner
{
    public static (int ExitCode, string Output) Run(string file, IEnumerable<string> args, string workingDirectory)
    {
        var psi = new ProcessStartInfo(file)
        {
            WorkingDirectory = workingDirectory,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (var a in args) psi.ArgumentList.Add(a);
        Process p;
        try
        {
            p = Process.Start(psi) ?? throw new WorkloadException($"cannot start {file}");
        }
        catch (System.ComponentModel.Win32Exception)
        {
            throw new WorkloadException(
                $"{file} not found: install it (Debian: apt-get install -y {file} build-essential)");
        }
        using (p)
        {
            var stdout = p.StandardOutput.ReadToEndAsync();
            var stderr = p.StandardError.ReadToEndAsync();
            p.WaitForExit();
            return (p.ExitCode, stdout.Result + stderr.Result);
        }
    }
}
