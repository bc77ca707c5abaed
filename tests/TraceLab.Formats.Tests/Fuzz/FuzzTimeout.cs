namespace TraceLab.Formats.Tests.Fuzz;

/// <summary>
/// Runs one fuzz read on a thread of its own and tells a hang from a read the machine starved: the test host runs
/// other test classes beside the fuzzing, each with a read per CPU, and a CI run once saw a case that reads in 1 ms
/// miss a 5 s limit. A read that misses the limit is read again alone; only a read that misses it twice is a hang (a
/// loop that never ends misses every limit).
/// </summary>
internal static class FuzzTimeout
{
    /// <summary>How long the second read may take: a starved read gets far more than the first limit, a hang no
    /// more than any limit.</summary>
    private static readonly TimeSpan SecondChance = TimeSpan.FromSeconds(60);

    /// <summary>Serializes the second reads: each runs with no other second read beside it.</summary>
    private static readonly SemaphoreSlim Alone = new(1, 1);

    /// <summary>True and the read's result when it ended within <paramref name="limit"/>, or its second read within
    /// <paramref name="secondChance"/> (default 60 s); false for a hang.</summary>
    public static bool TryRead<T>(Func<T> read, TimeSpan limit, out T result, TimeSpan? secondChance = null)
    {
        if (Within(read, limit, out result)) return true;
        Alone.Wait();
        try
        {
            return Within(read, secondChance ?? SecondChance, out result);
        }
        finally
        {
            Alone.Release();
        }
    }

    private static bool Within<T>(Func<T> read, TimeSpan limit, out T result)
    {
        // A thread of its own: a pool task could be run inline by Wait, and then a hang would never time out.
        var task = Task.Factory.StartNew(read, CancellationToken.None, TaskCreationOptions.LongRunning,
            TaskScheduler.Default);
        result = task.Wait(limit) ? task.Result : default!;
        return task.IsCompleted;
    }
}
