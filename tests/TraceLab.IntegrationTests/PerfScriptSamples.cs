using System.Globalization;
using System.Text.RegularExpressions;

namespace TraceLab.IntegrationTests;

/// <summary>One sample as `perf script` prints it: thread, time, event and its call chain's names.</summary>
/// <param name="Frames">Function names innermost first ("+0x…" offsets cut); empty without a call chain.</param>
internal sealed record PerfScriptSample(int Tid, long Ns, string Event, List<string> Frames);

/// <summary>
/// perf's own reading of a perf.data (`perf script --ns --no-inline -F tid,time,event,ip,sym`), the independent side
/// of the checks that compare TraceLab's reading of the same file.
/// </summary>
internal static partial class PerfScriptSamples
{
    public static IEnumerable<PerfScriptSample> Read(string data)
    {
        PerfScriptSample? sample = null;
        foreach (var line in ProcessOutput.Lines("perf", "script", "-i", data, "--ns", "--no-inline",
            "-F", "tid,time,event,ip,sym"))
        {
            if (Header().Match(line) is { Success: true } m)
            {
                if (sample is not null) yield return sample;
                sample = new PerfScriptSample(int.Parse(m.Groups[1].Value, CultureInfo.InvariantCulture),
                    long.Parse(m.Groups[2].Value, CultureInfo.InvariantCulture) * 1_000_000_000
                    + long.Parse(m.Groups[3].Value.PadRight(9, '0')[..9], CultureInfo.InvariantCulture),
                    m.Groups[4].Value, []);
            }
            else if (sample is not null && line.Trim().Split(' ', 2) is [_, var symbol])
            {
                sample.Frames.Add(symbol.Split("+0x")[0]);
            }
        }
        if (sample is not null) yield return sample;
    }

    [GeneratedRegex(@"^\s*(\d+)\s+(\d+)\.(\d+):\s+(\S+):")]
    private static partial Regex Header();
}
