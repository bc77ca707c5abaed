using System.Diagnostics;

namespace TraceLab.TestSupport;

/// <summary>Runs a program to completion (tests only), streaming stdout to a file when it is large.</summary>
public static class ProcessOutput
{
    public static (int ExitCode, string Stdout, string Stderr) Run(string file, params string[] args)
    {
        var psi = new ProcessStartInfo(
            file)
        { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (var a in args) psi.ArgumentList.Add(a);
        using var p = Process.Start(psi)!;
        var err = p.StandardError.ReadToEndAsync();
        var output = p.StandardOutput.ReadToEnd();
        p.WaitForExit();
        return (p.ExitCode, output, err.Result);
    }

    /// <summary>
    /// Runs and returns stdout as lines via a file (trace-cmd report of a big trace is hundreds of MB).
    /// </summary>
    public static IEnumerable<string> Lines(string file, params string[] args)
    {
        var tmp = Path.GetTempFileName();
        var psi = new ProcessStartInfo("/bin/sh") { UseShellExecute = false, RedirectStandardError = true };
        psi.ArgumentList.Add("-c");
        psi.ArgumentList.Add("\"$0\" \"$@\" > \"$TL_OUT\"");
        psi.ArgumentList.Add(file);
        foreach (var a in args) psi.ArgumentList.Add(a);
        psi.Environment["TL_OUT"] = tmp;
        using (var p = Process.Start(psi)!)
        {
            var err = p.StandardError.ReadToEnd();
            p.WaitForExit();
            if (p.ExitCode != 0) throw new InvalidOperationException($"{file} failed ({p.ExitCode}): {err}");
        }
        try
        {
            foreach (var line in File.ReadLines(tmp)) yield return line;
        }
        finally
        {
            File.Delete(tmp);
        }
    }
}
