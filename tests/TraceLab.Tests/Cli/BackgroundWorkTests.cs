using TraceLab.Cli;

namespace TraceLab.Tests.Cli;

/// <summary>
/// Work on other threads cannot outlive Main (<see cref="BackgroundWork"/>): the exit path waits for it, and tells
/// optional work to stop. Whole-process behaviour: ProcessFuzzTests in the integration tests.
/// </summary>
public sealed class BackgroundWorkTests
{
    [Fact]
    public void Drain_returns_only_after_running_work_has_ended()
    {
        var ended = false;
        using var started = new ManualResetEventSlim();
        BackgroundWork.Run(_ =>
        {
            started.Set();
            Thread.Sleep(300);
            Volatile.Write(ref ended, true);
        });
        Assert.True(started.Wait(TimeSpan.FromSeconds(30)), "the work never started");
        BackgroundWork.Drain();
        Assert.True(Volatile.Read(ref ended), "Drain returned while the work was still running");
    }

    [Fact]
    public async Task Drain_cancels_optional_work_and_later_work_starts_uncancelled()
    {
        using var started = new ManualResetEventSlim();
        var sawCancel = BackgroundWork.Run(token =>
        {
            started.Set();
            // Stands for a warm-up's steps: it checks the token between them.
            return token.WaitHandle.WaitOne(TimeSpan.FromSeconds(60));
        });
        Assert.True(started.Wait(TimeSpan.FromSeconds(30)), "the work never started");
        BackgroundWork.Drain();
        // True: the token ended the wait (false would be the 60 s running out).
        Assert.True(sawCancel.IsCompleted, "Drain returned while the work was still running");
        Assert.True(await sawCancel, "the work was not told to stop");

        var later = BackgroundWork.Run(token => token.IsCancellationRequested);
        Assert.False(await later, "work started after a drain began cancelled");
    }

    [Fact]
    public async Task Work_on_its_own_thread_holds_no_pool_thread_and_Drain_waits_for_it_and_cancels_it()
    {
        using var started = new ManualResetEventSlim();
        var onPool = BackgroundWork.RunOnOwnThread(token =>
        {
            started.Set();
            token.WaitHandle.WaitOne(TimeSpan.FromSeconds(60));
            return Thread.CurrentThread.IsThreadPoolThread;
        });
        Assert.True(started.Wait(TimeSpan.FromSeconds(30)), "the work never started");
        BackgroundWork.Drain();
        Assert.True(onPool.IsCompleted, "Drain returned while the work was still running");
        Assert.False(await onPool, "the work ran on a thread-pool thread");
    }

    [Fact]
    public void A_failed_task_is_observed_by_Drain_without_throwing()
    {
        var failing = BackgroundWork.Run(new Action<CancellationToken>(_ => throw new InvalidOperationException("x")));
        BackgroundWork.Drain();
        Assert.True(failing.IsFaulted);
    }
}
