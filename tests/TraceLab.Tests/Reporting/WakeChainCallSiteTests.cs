using TraceLab.Analyzers.Waits;
using TraceLab.Formats.Symbols;
using TraceLab.Reporting.Stacks;

namespace TraceLab.Tests.Reporting;

/// <summary>
/// The call site that names a wake-chain lock (docs/metrics.md#wake-chain-call-site), read off hand-built stacks
/// (innermost first): from the tagged frame, else from the first frame outside the wait's implementation; named frames
/// only while there are any; three frames.
/// </summary>
public sealed class WakeChainCallSiteTests
{
    private static SymbolFrame Kernel(string name) => new(0xffffffff81000000, "[kernel.kallsyms]", name, 0, true);

    private static SymbolFrame User(string module, string? name, ulong offset = 0x10) =>
        new(0x5500_0000_0000 + offset, module, name, offset, false);

    private static readonly SymbolFrame[] RowLock =
    [
        Kernel("schedule"), Kernel("do_epoll_wait"), User("/usr/lib/x86_64-linux-gnu/libc.so.6", "epoll_wait"),
        User("/usr/lib/postgresql/15/bin/postgres", "WaitEventSetWait"),
        User("/usr/lib/postgresql/15/bin/postgres", "WaitLatch"),
        User("/usr/lib/postgresql/15/bin/postgres", "ProcSleep"),
        User("/usr/lib/postgresql/15/bin/postgres", null, 0x45d95c),
        User("/usr/lib/postgresql/15/bin/postgres", "LockAcquireExtended"),
        User("/usr/lib/postgresql/15/bin/postgres", "XactLockTableWait"),
        User("/usr/lib/postgresql/15/bin/postgres", "heap_update"),
    ];

    [Fact]
    public void A_tagged_frame_starts_the_site_and_unnamed_frames_are_left_out()
    {
        Assert.Equal("ProcSleep ← LockAcquireExtended ← XactLockTableWait",
            WakeChainCallSite.Of(RowLock, WaitStackTags.Default));
    }

    [Fact]
    public void Without_a_tag_the_site_starts_outside_the_kernel_and_libc()
    {
        Assert.Equal("WaitEventSetWait ← WaitLatch ← ProcSleep",
            WakeChainCallSite.Of(RowLock, new WaitStackTags([])));
    }

    [Fact]
    public void A_stack_of_offsets_only_is_named_by_them_and_one_without_user_frames_names_nothing()
    {
        SymbolFrame[] stripped =
        [
            Kernel("schedule"), User("/opt/app/server", null, 0x1200), User("/opt/app/server", null, 0x3400),
            User("/opt/app/server", null, 0x5600), User("/opt/app/server", null, 0x7800),
        ];
        Assert.Equal("server+0x1200 ← server+0x3400 ← server+0x5600",
            WakeChainCallSite.Of(stripped, WaitStackTags.Default));
        Assert.Null(WakeChainCallSite.Of([Kernel("schedule"), Kernel("futex_wait")], WaitStackTags.Default));
        Assert.Null(WakeChainCallSite.Of([], WaitStackTags.Default));
    }
}
