namespace TraceLab.Analyzers.Waits;

/// <summary>
/// A function name pattern and the wait class every blocking call beneath it has (a stack tag, as WPA's stack tags
/// name a frame's purpose).
/// </summary>
/// <param name="Pattern">
/// The function name; <c>*</c> matches any run of characters (so mangled C++ names and glibc's internal aliases
/// match too: <c>*pthread_mutex_lock*</c> is <c>pthread_mutex_lock</c>, <c>___pthread_mutex_lock</c>,
/// <c>__pthread_mutex_lock_full</c>).
/// </param>
/// <param name="Class">What a wait with this function on its blocking stack waited for.</param>
public sealed record WaitStackTag(string Pattern, WaitClass Class)
{
    /// <summary>True when <paramref name="name"/> matches <see cref="Pattern"/> (case-sensitive glob).</summary>
    public bool Matches(string name) => Glob(Pattern, name);

    private static bool Glob(ReadOnlySpan<char> pattern, ReadOnlySpan<char> name)
    {
        // Iterative glob with one backtrack point: linear for the patterns used here.
        int p = 0, n = 0, star = -1, mark = 0;
        while (n < name.Length)
        {
            if (p < pattern.Length && pattern[p] == '*')
            {
                star = p++;
                mark = n;
            }
            else if (p < pattern.Length && pattern[p] == name[n])
            {
                p++;
                n++;
            }
            else if (star >= 0)
            {
                p = star + 1;
                n = ++mark;
            }
            else
            {
                return false;
            }
        }
        while (p < pattern.Length && pattern[p] == '*') p++;
        return p == pattern.Length;
    }
}

/// <summary>
/// Classifies a blocked interval by its blocking stack (docs/metrics.md#wait-stack-tags): the frames are read from
/// the innermost out and the first that a tag matches decides. A tag names a function under which every blocking call
/// waits for one kind of thing (<c>pthread_mutex_lock</c>, PostgreSQL's <c>ProcSleep</c> or <c>secure_read</c>), never
/// a general loop (<c>main</c>, a server's main loop) under which anything may block; so a condition variable's wait
/// (<c>pthread_cond_wait</c>, which may queue for a lock or park an idle worker) is left to the trace's rules, unless
/// a caller further out names it (a lock manager's sleep).
/// </summary>
public sealed class WaitStackTags
{
    /// <summary>Makes a tag set; earlier tags win when two match the same frame.</summary>
    public WaitStackTags(IReadOnlyList<WaitStackTag> tags) => Tags = tags;

    /// <summary>The tags, in the order they are tried on each frame.</summary>
    public IReadOnlyList<WaitStackTag> Tags { get; }

    /// <summary>
    /// The tags TraceLab ships: glibc's locks, the Linux kernel's sleeping locks and page faults, PostgreSQL's lock
    /// manager, LWLocks and client socket. Each was checked on a real stack (docs/metrics.md#wait-stack-tags).
    /// </summary>
    public static WaitStackTags Default { get; } = new(
    [
        // glibc (2.34+ names, with libc6-dbg: __GI___lll_lock_wait, ___pthread_mutex_lock, __pthread_mutex_lock_full;
        // without it the exported pthread_mutex_lock is the frame). A condition wait re-acquiring its mutex blocks in
        // __pthread_mutex_cond_lock: a lock wait too.
        new("*lll_lock_wait*", WaitClass.Lock),
        new("*pthread_mutex_lock*", WaitClass.Lock),
        new("*pthread_mutex_timedlock*", WaitClass.Lock),
        new("*pthread_mutex_clocklock*", WaitClass.Lock),
        new("*pthread_mutex_cond_lock*", WaitClass.Lock),
        new("*pthread_rwlock_rdlock*", WaitClass.Lock),
        new("*pthread_rwlock_wrlock*", WaitClass.Lock),
        new("*pthread_rwlock_timedrdlock*", WaitClass.Lock),
        new("*pthread_rwlock_timedwrlock*", WaitClass.Lock),
        new("*pthread_rwlock_clockrdlock*", WaitClass.Lock),
        new("*pthread_rwlock_clockwrlock*", WaitClass.Lock),
        new("__pthread_rwlock_rdlock_full*", WaitClass.Lock),
        new("__pthread_rwlock_wrlock_full*", WaitClass.Lock),
        // The kernel's sleeping locks (mmap_lock in a page fault, an inode's i_rwsem, a mutex).
        new("rwsem_down_read_slowpath", WaitClass.Lock),
        new("rwsem_down_write_slowpath", WaitClass.Lock),
        new("__mutex_lock*", WaitClass.Lock),
        new("percpu_rwsem_wait", WaitClass.Lock),
        // A page fault that sleeps (page-in, a folio being read) is memory.
        new("handle_mm_fault", WaitClass.Memory),
        new("exc_page_fault", WaitClass.Memory),
        // PostgreSQL: the heavyweight lock manager's sleep (row and transaction locks: WaitLatch, epoll_wait
        // beneath), LWLocks (a semaphore of each backend's own beneath), the spinlock's back-off sleep.
        new("ProcSleep", WaitClass.Lock),
        new("LWLockAcquire", WaitClass.Lock),
        new("LWLockAcquireOrWait", WaitClass.Lock),
        new("LWLockWaitForVar", WaitClass.Lock),
        new("perform_spin_delay", WaitClass.Lock),
        // PostgreSQL's client socket: a backend waiting for its client's next query (WaitEventSetWait, epoll_wait
        // beneath), or for the client to read its answer.
        new("secure_read", WaitClass.Io),
        new("secure_write", WaitClass.Io),
        // MariaDB (10.6+; mariadbd's dynamic symbols, which Debian's binary keeps): a connection's client socket
        // (vio_*: a wait for the client's next query, or for it to read an answer) is io; before it answers, a
        // connection whose commit is still being made durable waits for its pending operations (group commit, the
        // redo log's write: thd_async_state::wait_for_pending_ops, a condition wait inlined into net_real_write,
        // released by thd_decrement_pending_ops): commit, not a lock, although the connections release each other in
        // turn. The socket's frames are inside net_real_write's and are found first.
        new("vio_io_wait", WaitClass.Io),
        new("vio_socket_io_wait", WaitClass.Io),
        new("vio_read", WaitClass.Io),
        new("vio_write", WaitClass.Io),
        new("*wait_for_pending_ops*", WaitClass.Commit),
        new("net_real_write", WaitClass.Commit),
        // HotSpot (libjvm.so's .symtab, demangled: ObjectMonitor::EnterI; each glob matches the mangled name too,
        // _ZN13ObjectMonitor6EnterIEP10JavaThread, as a symbolizer with demangling off gives it): a thread entering
        // a contended `synchronized` parks in ObjectMonitor::EnterI (its own ParkEvent beneath: pthread_cond_wait,
        // futex); Object.wait() parks in ObjectMonitor::wait ("4wait" mangled) and re-enters the
        // monitor in ReenterI, a lock wait again; Thread.sleep is JVM_Sleep. LockSupport.park (Unsafe_Park) is left
        // to the rules: java.util.concurrent's locks and idle pools share it.
        new("*ObjectMonitor*EnterI*", WaitClass.Lock),
        new("*ObjectMonitor*ReenterI*", WaitClass.Lock),
        new("*ObjectMonitor*4wait*", WaitClass.Condition),
        new("*ObjectMonitor::wait*", WaitClass.Condition),
        new("JVM_Sleep", WaitClass.Sleep),
        // .NET (method names from the runtime's perf map, DOTNET_PerfMapEnabled=1: "void [System.Private.CoreLib]
        // System.Threading.Monitor::Enter(class System.Object)[Optimized]"): C#'s `lock` on an object
        // (Monitor.Enter) or on a System.Threading.Lock, ReaderWriterLockSlim's enters; Monitor.Wait is a condition.
        // SemaphoreSlim and the events are left to the rules: they serve as locks and as queues alike.
        new("*System.Threading.Monitor::Enter*", WaitClass.Lock),
        new("*System.Threading.Monitor::ReliableEnter*", WaitClass.Lock),
        new("*System.Threading.Monitor::TryEnter*", WaitClass.Lock),
        new("*System.Threading.Lock::Enter*", WaitClass.Lock),
        new("*System.Threading.Lock::TryEnter*", WaitClass.Lock),
        new("*System.Threading.ReaderWriterLockSlim::TryEnter*Lock*", WaitClass.Lock),
        new("*System.Threading.Monitor::Wait*", WaitClass.Condition),
        new("*System.Threading.Monitor::ObjWait*", WaitClass.Condition),
        new("*System.Threading.Thread::Sleep*", WaitClass.Sleep),
    ]);

    /// <summary>
    /// This set with <paramref name="first"/> tried before its own tags (a user's tags override the shipped ones on
    /// the frame where both match).
    /// </summary>
    public WaitStackTags With(IReadOnlyList<WaitStackTag> first) => first.Count == 0 ? this : new([.. first, .. Tags]);

    /// <summary>
    /// Reads a tag file (docs/metrics.md#wait-tag-files): one tag per line, the class name then the pattern
    /// (<c>lock MyMutex::lock*</c>), separated by blanks; <c>#</c> starts a comment; blank lines are skipped.
    /// </summary>
    /// <param name="text">The file's text.</param>
    /// <param name="source">The file's name, for the error message.</param>
    /// <exception cref="FormatException">A line that is not a known class and one pattern: the message names the file,
    /// the line and the classes.</exception>
    public static IReadOnlyList<WaitStackTag> Parse(string text, string source)
    {
        ArgumentNullException.ThrowIfNull(text);
        var tags = new List<WaitStackTag>();
        var number = 0;
        foreach (var raw in text.Split('\n'))
        {
            number++;
            var hash = raw.IndexOf('#', StringComparison.Ordinal);
            var line = (hash >= 0 ? raw[..hash] : raw).Trim();
            if (line.Length == 0) continue;
            var parts = line.Split((char[]?)null, StringSplitOptions.RemoveEmptyEntries);
            var cls = WaitClasses.All.Where(c => WaitClasses.Name(c) == parts[0]).Select(c => (WaitClass?)c)
                .FirstOrDefault();
            if (parts.Length != 2 || cls is null)
            {
                throw new FormatException($"{source}:{number}: expected a class ({string.Join(", ",
                    WaitClasses.All.Select(WaitClasses.Name))}) and one function name pattern, not '{line}'");
            }
            tags.Add(new WaitStackTag(parts[1], cls.Value));
        }
        return tags;
    }

    /// <summary>
    /// The class the first tagged frame gives, innermost first, with the tag; null when no frame is tagged (the
    /// trace's rules stand).
    /// </summary>
    /// <param name="functions">The stack's function names, innermost first (null: a frame with no name).</param>
    public (WaitClass Class, WaitStackTag Tag)? ClassOf(IEnumerable<string?> functions) =>
        FirstTagged(functions) is { } hit ? (hit.Tag.Class, hit.Tag) : null;

    /// <summary>
    /// The first tagged frame, innermost first: its index in <paramref name="functions"/> and its tag; null when none.
    /// </summary>
    public (int Index, WaitStackTag Tag)? FirstTagged(IEnumerable<string?> functions)
    {
        var i = 0;
        foreach (var f in functions)
        {
            if (!string.IsNullOrEmpty(f))
            {
                foreach (var t in Tags)
                    if (t.Matches(f)) return (i, t);
            }
            i++;
        }
        return null;
    }
}
