using TraceLab.Core;

namespace TraceLab.Formats.Tests.Symbols;

/// <summary>
/// A process's maps over time: an exec ends the old program's mappings and not the new one's, whatever order the
/// records were read in (perf writes each CPU's buffer in turn, so a program's mappings can come before the exec
/// that precedes them: measured on `perf record -- taskset -c 0 PROGRAM`, every frame of the program was unnamed).
/// </summary>
public sealed class ProcessMapsTests
{
    private const int Pid = 31;

    private static ModuleMapping Map(ulong start, string path, long since) =>
        new(start, 0x1000, 0, path, null, Executable: true, Since: since);

    [Fact]
    public void An_exec_ends_the_old_programs_mappings_and_keeps_the_new_ones_read_before_it()
    {
        var maps = new ProcessMaps();
        maps.Add(Pid, Map(0x1000, "/usr/bin/taskset", since: 100));
        maps.Add(Pid, Map(0x7000, "/usr/lib/libc.so.6", since: 110));
        // The new program's mappings, read before the exec at 200 that precedes them.
        maps.Add(Pid, Map(0x2000, "/srv/program", since: 210));
        maps.Add(Pid, Map(0x8000, "/usr/lib/libc.so.6", since: 220));
        maps.Exec(Pid, 200);

        Assert.Equal("/usr/bin/taskset", maps.Find(Pid, 0x1010, 150)?.Path);
        Assert.Equal("/usr/lib/libc.so.6", maps.Find(Pid, 0x7010, 150)?.Path);
        Assert.Equal("/srv/program", maps.Find(Pid, 0x2010, 300)?.Path);
        Assert.Equal(0x8000ul, maps.Find(Pid, 0x8010, 300)?.Start);
        // The old program's libc mapping ended at the exec.
        Assert.Equal(200, maps.Of(Pid).Single(m => m.Start == 0x7000).Until);
        Assert.Equal(long.MaxValue, maps.Of(Pid).Single(m => m.Start == 0x8000).Until);
        Assert.Equal(long.MaxValue, maps.Of(Pid).Single(m => m.Start == 0x2000).Until);
    }
}
