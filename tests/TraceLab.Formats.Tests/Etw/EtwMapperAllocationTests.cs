using TraceLab.Core;
using TraceLab.Formats.Etw;
using static TraceLab.Formats.Tests.Etw.EtwPayloads;

namespace TraceLab.Formats.Tests.Etw;

public class EtwMapperAllocationTests
{
    [Fact]
    public void Mapping_the_hot_events_allocates_nothing()
    {
        var mapper = new EtwKernelEventMapper(new ThreadTable(), new ThreadProcessMap());
        var events = new (EtwEventHeader Header, byte[] Payload)[]
        {
            (ThreadHeader(EtwKernelEvents.CSwitch, 1, 0, -1), CSwitch(2, 1, 8, 8, 37, 0, KThreadState.Waiting)),
            (ThreadHeader(EtwKernelEvents.ReadyThread, 2, 0, 2), ReadyThread(1, flag: 1)),
            (PerfInfoHeader(EtwKernelEvents.SysClEnter, 3, 0, 2), SysClEnter(8, 0xFFFFF80000001000)),
            (PerfInfoHeader(EtwKernelEvents.SysClExit, 4, 0, 2), SysClExit(0)),
            (ThreadHeader(EtwKernelEvents.ThreadDCEnd, 5, 0, -1), Thread(8, 10, 1, "named")),
            (PerfInfoHeader(46, 6, 0, -1), new byte[16]),
        };
        var e = new KernelEvent();
        foreach (var (h, p) in events) mapper.Map(h, p, ref e); // first sight of a name or CPU may allocate

        var allocated = Allocations.FewestBytesPerRound(() =>
        {
            for (var i = 0; i < 1000; i++)
                foreach (var (h, p) in events) mapper.Map(h, p, ref e);
        });

        Assert.Equal(0, allocated);
    }
}
