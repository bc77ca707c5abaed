using TraceLab.Analyzers.Waits;
using TraceLab.Reporting;
using TraceLab.Reporting.Waits;

namespace TraceLab.IntegrationTests;

/// <summary>
/// The wait classes (docs/metrics.md#wait-classes) on a real capture of a program whose answer is known by
/// construction: three threads contend for one mutex for a second while a pool of three idles in pthread_cond_wait
/// until the end. The idle waits must be condition waits, the mutex waits lock waits, and the condition variable's
/// futex must not be listed as a lock object.
/// </summary>
public sealed class WaitClassCaptureTests(ITestOutputHelper output)
{
    private const string Program = """
        #define _GNU_SOURCE
        #include <pthread.h>
        #include <time.h>
        static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER, queue = PTHREAD_MUTEX_INITIALIZER;
        static pthread_cond_t work = PTHREAD_COND_INITIALIZER;
        static int stop;
        static double now(void) {
            struct timespec t;
            clock_gettime(CLOCK_MONOTONIC, &t);
            return t.tv_sec + t.tv_nsec / 1e9;
        }
        static void *locker(void *arg) {
            volatile unsigned long x = 0;
            double end = now() + 1.0;
            pthread_setname_np(pthread_self(), "locker");
            while (now() < end) {
                pthread_mutex_lock(&lock);
                for (int i = 0; i < 20000; i++) x++;
                pthread_mutex_unlock(&lock);
                for (int i = 0; i < 2000; i++) x++;
            }
            return arg;
        }
        static void *idler(void *arg) {
            pthread_setname_np(pthread_self(), "idler");
            pthread_mutex_lock(&queue);
            while (!stop) pthread_cond_wait(&work, &queue);
            pthread_mutex_unlock(&queue);
            return arg;
        }
        int main(void) {
            pthread_t l[3], p[3];
            for (int i = 0; i < 3; i++) pthread_create(&p[i], 0, idler, 0);
            for (int i = 0; i < 3; i++) pthread_create(&l[i], 0, locker, 0);
            for (int i = 0; i < 3; i++) pthread_join(l[i], 0);
            pthread_mutex_lock(&queue);
            stop = 1;
            pthread_cond_broadcast(&work);
            pthread_mutex_unlock(&queue);
            for (int i = 0; i < 3; i++) pthread_join(p[i], 0);
            return 0;
        }
        """;

    [TracingProgramFact("cc")]
    public void An_idle_pool_waits_on_a_condition_and_the_contended_mutex_is_the_lock()
    {
        using var dir = new TempDirectory("tracelab-waits");
        var source = Path.Combine(dir.Path, "pool.c");
        var exe = Path.Combine(dir.Path, "pool");
        File.WriteAllText(source, Program);
        var cc = ProcessOutput.Run("cc", "-O1", "-pthread", "-o", exe, source);
        Assert.True(cc.ExitCode == 0, cc.Stderr);

        var outDir = Path.Combine(dir.Path, "trace");
        var run = TraceTargetCaptureTests.Run(TimeSpan.FromSeconds(120), null, "trace", "--out", outDir, "--", exe);
        Assert.True(run.ExitCode == 0, run.Stderr);
        var report = ReportJson.Deserialize(File.ReadAllText(Path.Combine(outDir, "report.json")));
        var waits = Assert.IsType<WaitsSection>(report.SectionOf(AnalysisReports.Of<WaitsReport>()));

        var idlers = waits.Threads.Where(t => t.Name == "idler").ToList();
        var lockers = waits.Threads.Where(t => t.Name == "locker").ToList();
        Assert.Equal(3, idlers.Count);
        Assert.Equal(3, lockers.Count);
        foreach (var t in idlers.Concat(lockers))
        {
            output.WriteLine($"{t.Name} {t.Tid}: " +
                string.Join(", ", waits.Classes.Select((c, i) => $"{c} {t.Ns[i] / 1e6:0.0} ms ({t.Waits[i]})")));
        }
        const int Lock = (int)WaitClass.Lock, Condition = (int)WaitClass.Condition;
        foreach (var t in idlers)
        {
            // Parked for the lockers' whole second; at the end they take the queue mutex one after another.
            Assert.True(t.Ns[Condition] >= 900_000_000, $"idler {t.Tid}: condition {t.Ns[Condition]} ns");
            Assert.True(t.Ns[Condition] >= 0.95 * t.Ns.Sum(), $"idler {t.Tid}: {string.Join(", ", t.Ns)}");
        }
        foreach (var t in lockers)
        {
            Assert.True(t.Waits[Lock] > 0 && t.Ns[Lock] >= 0.9 * t.Ns.Sum(),
                $"locker {t.Tid}: {string.Join(", ", t.Ns)}");
        }

        // The condition variable's futex is no lock object: the mutex heads the table, only lockers queue on it.
        var convoys = report.Convoys!;
        Assert.True(convoys.EventObjects >= 1, $"event objects: {convoys.EventObjects}");
        var lockerTids = lockers.Select(t => t.Tid).ToHashSet();
        var top = convoys.Objects.OrderByDescending(o => o.BlockingWaits).First();
        Assert.Subset(lockerTids, top.Participants.ToHashSet());
    }
}
