namespace TraceLab.Cli;

/// <summary>
/// Work a command runs on other threads that must end before the process does. Native code still running while
/// the runtime exits crashes the process after its result was printed: the chart warm-up inside Skia when an
/// error path returned from Main ended in SIGSEGV in libSkiaSharp.so (the library's exit-time teardown under a
/// thread that still drew). Every such task starts here, and <see cref="Drain"/> runs on every way out of Main.
/// </summary>
public static class BackgroundWork
{
    private static readonly object Gate = new();
    private static readonly List<Task> Running = [];
    private static CancellationTokenSource _ending = new();

    /// <summary>
    /// Starts <paramref name="work"/> on the thread pool. Its token is cancelled when the process starts to end:
    /// optional work (a warm-up) stops at its next step instead of delaying the exit.
    /// </summary>
    public static Task<T> Run<T>(Func<CancellationToken, T> work)
    {
        lock (Gate)
        {
            var token = _ending.Token;
            var task = Task.Run(() => work(token));
            Track(task);
            return task;
        }
    }

    /// <summary>
    /// As <see cref="Run{T}(Func{CancellationToken, T})"/>, on a thread of its own: for long work (a second pass over
    /// the trace) that would otherwise hold one of the thread pool's few threads (two on two CPUs) while the report
    /// files wait for one.
    /// </summary>
    public static Task<T> RunOnOwnThread<T>(Func<CancellationToken, T> work)
    {
        lock (Gate)
        {
            var token = _ending.Token;
            var task = Task.Factory.StartNew(() => work(token), CancellationToken.None,
                TaskCreationOptions.LongRunning, TaskScheduler.Default);
            Track(task);
            return task;
        }
    }

    /// <inheritdoc cref="Run{T}(Func{CancellationToken, T})"/>
    public static Task Run(Action<CancellationToken> work)
    {
        lock (Gate)
        {
            var token = _ending.Token;
            var task = Task.Run(() => work(token));
            Track(task);
            return task;
        }
    }

    /// <summary>Tasks still tracked (finished ones are dropped as new ones start); for tests.</summary>
    public static int Pending
    {
        get
        {
            lock (Gate) return Running.Count(t => !t.IsCompleted);
        }
    }

    /// <summary>
    /// Cancels optional work and waits until every task started here has ended. Their failures were reported by
    /// whoever awaited them, or do not matter any more (nobody awaited them: the command failed first).
    /// </summary>
    public static void Drain()
    {
        Task[] all;
        lock (Gate)
        {
            _ending.Cancel();
            all = [.. Running];
            Running.Clear();
            // A process that goes on (a test host running commands in turn) gets warm-ups again.
            _ending = new CancellationTokenSource();
        }
        foreach (var task in all)
        {
            try
            {
                task.Wait();
            }
            catch (AggregateException)
            {
                // Observed here so that the runtime does not report it as unobserved.
            }
        }
    }

    private static void Track(Task task)
    {
        Running.RemoveAll(t => t.IsCompleted);
        Running.Add(task);
    }
}
