using TraceLab.Core;
using TraceLab.Formats.Ftrace;

namespace TraceLab.Formats.Tests;

public class FormatParsingTests
{
    [Fact]
    public void ParsesSchedSwitch()
    {
        var f = TestData.Format("sched", "sched_switch");
        Assert.Equal("sched_switch", f.Name);
        Assert.True(f.Id > 0);
        Assert.Equal(4, f.Fields.Count(x => x.IsCommon));
        var comm = f.Field("prev_comm")!;
        Assert.Equal(16, comm.ArrayLength);
        Assert.Equal(16, comm.Size);
        Assert.False(comm.IsCommon);
        var state = f.Field("prev_state")!;
        Assert.Equal(8, state.Size);
        Assert.True(state.IsSigned);
        Assert.True(f.Field("next_pid")!.Offset > f.Field("next_comm")!.Offset);
        Assert.StartsWith("\"prev_comm=%s", f.PrintFormat, StringComparison.Ordinal);
    }

    [Fact]
    public void ParsesDataLocAndFlexibleArrays()
    {
        var exec = TestData.Format("sched", "sched_process_exec").Field("filename")!;
        Assert.True(exec.IsDynamic);
        Assert.Equal(4, exec.Size);
        Assert.Equal("__data_loc char[]", exec.Type);

        var buf = TestData.Format("ftrace", "print").Field("buf")!;
        Assert.False(buf.IsDynamic);
        Assert.Equal(0, buf.ArrayLength);

        var args = TestData.Format("raw_syscalls", "sys_enter").Field("args")!;
        Assert.Equal(6, args.ArrayLength);
        Assert.Equal(48, args.Size);
        Assert.Equal("unsigned long[6]", args.Type);
    }

    [Fact]
    public void ParsesEveryResourceFormat()
    {
        foreach (var (system, text) in TestData.AllFormats())
        {
            var f = FtraceEventFormat.Parse(text, system);
            Assert.NotEmpty(f.Name);
            Assert.NotNull(f.Field("common_type"));
            Assert.NotNull(f.Field("common_pid"));
        }
    }

    [Fact]
    public void ParsesHeaderPage()
    {
        var layout = HeaderPageLayout.Parse(TestData.Resource("header_page"));
        Assert.Equal(HeaderPageLayout.Default64, layout);
        Assert.Equal(4096, layout.PageSize);
    }

    [Fact]
    public void RejectsFormatWithoutId()
    {
        Assert.Throws<TraceFormatException>(() => FtraceEventFormat.Parse("name: x\nformat:\n"));
        Assert.Throws<TraceFormatException>(() => HeaderPageLayout.Parse("nonsense"));
    }
}
