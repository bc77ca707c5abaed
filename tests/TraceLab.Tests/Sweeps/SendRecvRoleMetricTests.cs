using TraceLab.Sweeps;
using TraceLab.Tests.Workloads;
using TraceLab.Workloads;

namespace TraceLab.Tests.Sweeps;

/// <summary>
/// The per-role sums the sweep takes from a real sendrecv result, against the sums the C program computes itself
/// (its metrics receiverContextSwitches / senderContextSwitches / receiveCount / sendCount).
/// </summary>
public sealed class SendRecvRoleMetricTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("tracelab-roles-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    [NativeToolsFact]
    public async Task Receiver_and_sender_sums_equal_the_workloads_own()
    {
        var w = WorkloadCatalog.Find("sendrecv")!;
        var exe = new NativeWorkloadBuilder(RepoPaths.Root).EnsureBuilt("sendrecv");
        var values =
            w.Resolve(w.FindScenario("event-inside-lock")!, new Dictionary<string, string> { ["duration-ms"] = "200" });
        var result = Path.Combine(_dir, "workload.json");
        using (var run = WorkloadRun.Start(exe, w.Arguments(values), null, result, Path.Combine(_dir, "workload.log")))
            Assert.Equal(0, await run.WaitAsync(CancellationToken.None));

        var m = WorkloadMetrics.Read(File.ReadAllText(result));
        Assert.Equal(m["receiverContextSwitches"], m["receiver.switches"]);
        Assert.Equal(m["senderContextSwitches"], m["sender.switches"]);
        Assert.Equal(m["receiveCount"], m["receiver.iterations"]);
        Assert.Equal(m["sendCount"], m["sender.iterations"]);
        Assert.Equal(m["receiver.vol"] + m["receiver.invol"], m["receiver.switches"]);
        Assert.True(m["receiver.switches"] > 0, "a receiver that waits on an event switches at least once");
    }
}
