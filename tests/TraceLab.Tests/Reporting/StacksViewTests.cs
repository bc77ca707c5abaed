using TraceLab.Reporting.Stacks;
using TraceLab.Reporting.Tables;

namespace TraceLab.Tests.Reporting;

/// <summary>
/// The lock stacks as report.md and the terminal show them: an inlined function is a frame of its own, marked so
/// with the line inside it, before the function it was inlined into (docs/metrics.md#inlined-frames).
/// </summary>
public sealed class StacksViewTests
{
    private static FrameEntry Frame(string symbol, string module, int line, bool inlined = false) => new()
    {
        Address = "0x55c8c8401208",
        Module = module,
        Symbol = symbol,
        Offset = "0x1f",
        File = "/src/lock_sites.c",
        Line = line,
        Inlined = inlined ? true : null,
    };

    [Fact]
    public void An_inlined_frame_reads_inlined_with_its_line_before_the_function_holding_it()
    {
        var section = new StacksSection
        {
            Locks =
            [
                new LockStacksEntry
                {
                    Process = 7, Address = "0x55c8c8474080", Name = "g_stats_lock", NameKind = "variable", Waits = 3,
                    WaitMs = 1.5,
                    Blocking =
                    [
                        new StackEntry
                        {
                            Process = 7, Count = 3, Ms = 1.5,
                            Frames =
                            [
                                Frame("__lll_lock_wait", "[kernel.kallsyms]", 1),
                                Frame("take_stats_lock", "/tmp/lock_sites", 33, inlined: true),
                                Frame("update_stats", "/tmp/lock_sites", 38),
                            ],
                        },
                    ],
                },
            ],
        };

        var blocks = StacksView.View(section)!;
        const string Expected = "take_stats_lock (inlined, lock_sites.c:33) ← update_stats (lock_sites.c:38)";
        Assert.Contains(blocks.OfType<MarkdownText>().SelectMany(b => b.Lines),
            l => l.Contains($"`{Expected}`", StringComparison.Ordinal));
        Assert.Contains(blocks.OfType<TerminalLine>(), l => l.Markup.EndsWith(Expected, StringComparison.Ordinal));
    }
}
