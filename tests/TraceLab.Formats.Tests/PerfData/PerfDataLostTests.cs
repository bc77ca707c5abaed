using TraceLab.Formats.PerfData;

namespace TraceLab.Formats.Tests.PerfData;

/// <summary>
/// Hand-built perf.data files with known lost counts: the kernel's LOST records (placed on their CPU by their
/// trailer) and the LOST_SAMPLES records perf record writes at its end (placed by their sample id), per CPU.
/// </summary>
public sealed class PerfDataLostTests : IDisposable
{
    private readonly TestTraceFile _files = new();

    public void Dispose() => _files.Dispose();

    private PerfDataReader Read(PerfDataBuilder b) => b.WriteAndRead(_files.Directory);

    [Fact]
    public void Lost_samples_are_counted_on_the_cpu_of_their_sample_id_not_their_zero_trailer()
    {
        // perf record's LOST_SAMPLES carry CPU 0 in the trailer whatever CPU their event was on; the id says which.
        using var reader = Read(new PerfDataBuilder { Cpus = 4, IdPerCpu = true }
            .Sample(10, 2, TestTraceFile.Switch(1, 2))
            .Lost(5, 20, 2)
            .Lost(3, 30, 3)
            .FinishedRound()
            .LostSamples(9, cpuOfId: 2)
            .LostSamples(4, cpuOfId: 3)
            .LostSamples(6, cpuOfId: 1)
            // A BPF filter's drops are not lost events.
            .LostSamples(1000, cpuOfId: 0, misc: 1 << 15));

        // Per CPU the larger of the kernel's LOST records and perf's LOST_SAMPLES: both count the same drops.
        Assert.Equal([0L, 6, 9, 4], reader.Info.LostEventsPerCpu!);
        Assert.Equal(19, reader.Info.LostEvents);
    }

    [Fact]
    public void Without_every_cpu_online_lost_samples_stay_on_their_trailers_cpu()
    {
        // With CPUs offline the ids' order maps to the online CPUs, which the file does not list: no guess is made.
        using var reader = Read(new PerfDataBuilder { Cpus = 4, OnlineCpus = 3, IdPerCpu = true }
            .Sample(10, 2, TestTraceFile.Switch(1, 2))
            .FinishedRound()
            .LostSamples(9, cpuOfId: 2));

        Assert.Equal([9L, 0, 0, 0], reader.Info.LostEventsPerCpu!);
    }
}
