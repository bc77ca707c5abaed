using System.Diagnostics;

namespace TraceLab.TestSupport;

/// <summary>
/// Runs Debian's chromium headless on a local file (tests and the docs' screenshots): no sandbox (we are root), no
/// GPU, no network side traffic, a throwaway profile. Killed after <see cref="Timeout"/>.
/// </summary>
public static class HeadlessChromium
{
    public static readonly TimeSpan Timeout = TimeSpan.FromSeconds(90);

    /// <summary>The DOM after load and scripts, serialized (chromium --dump-dom).</summary>
    public static string DumpDom(string htmlFile) => Run(htmlFile, ["--dump-dom"]).Stdout;

    /// <summary>
    /// Writes a PNG of the page at <paramref name="width"/>×<paramref name="height"/> CSS pixels; returns chromium's
    /// stderr.
    /// </summary>
    public static string Screenshot(string htmlFile, string pngFile, int width = 1400, int height = 1800) =>
        Run(htmlFile, [$"--screenshot={pngFile}", $"--window-size={width},{height}", "--hide-scrollbars"]).Stderr;

    private static (string Stdout, string Stderr) Run(string htmlFile, string[] extra)
    {
        var profile = RepoPaths.NewTempDirectory("tracelab-chromium");
        try
        {
            var psi = new ProcessStartInfo(TestEnvironment.ChromiumPath)
            {
                RedirectStandardOutput = true,
                RedirectStandardError = true,
                UseShellExecute = false,
            };
            foreach (var a in new[]
            {
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                    "--disable-component-update",
                "--disable-sync", "--no-first-run", "--disable-extensions", $"--user-data-dir={profile}",
                "--enable-logging=stderr", "--v=0",
            }.Concat(extra)) psi.ArgumentList.Add(a);
            psi.ArgumentList.Add(new Uri(Path.GetFullPath(htmlFile)).AbsoluteUri);
            using var p = Process.Start(psi)!;
            var stderr = p.StandardError.ReadToEndAsync();
            var stdout = p.StandardOutput.ReadToEndAsync();
            if (!p.WaitForExit(Timeout))
            {
                p.Kill(entireProcessTree: true);
                throw new TimeoutException($"chromium did not finish within {Timeout.TotalSeconds} s on {htmlFile}");
            }
            if (p.ExitCode != 0)
                throw new InvalidOperationException($"chromium exited with {p.ExitCode}: {stderr.Result}");
            return (stdout.Result, stderr.Result);
        }
        finally
        {
            try
            {
                Directory.Delete(
                profile, recursive: true);
            }
            catch (IOException) { }
            catch (UnauthorizedAccessException) { }
        }
    }
}
