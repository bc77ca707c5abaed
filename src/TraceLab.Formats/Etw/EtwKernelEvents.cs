namespace TraceLab.Formats.Etw;

/// <summary>Task GUIDs and opcodes of the classic kernel events TraceLab maps (docs/reference:
/// etw-kernel-events).</summary>
public static class EtwKernelEvents
{
    public static readonly Guid ThreadGuid = new("3d6fa8d1-fe05-11d0-9dda-00c04fd7ba7c");
    public static readonly Guid PerfInfoGuid = new("ce1dbfb4-137e-4da6-87b0-3f59aa102cbc");
    public static readonly Guid ProcessGuid = new("3d6fa8d0-fe05-11d0-9dda-00c04fd7ba7c");

    // Thread task
    public const byte ThreadStart = 1;
    public const byte ThreadEnd = 2;
    /// <summary>Rundown at session start: threads that already existed.</summary>
    public const byte ThreadDCStart = 3;
    /// <summary>Rundown at session end: threads still alive, not exiting.</summary>
    public const byte ThreadDCEnd = 4;
    public const byte CSwitch = 36;
    /// <summary>Same GUID as the thread events, though it is enabled by the Dispatcher keyword.</summary>
    public const byte ReadyThread = 50;
    public const byte ThreadSetName = 72;

    // Process task: the same opcode numbers as the thread rundown, plus Defunct (a zombie's late rundown).
    public const byte ProcessStart = 1;
    public const byte ProcessEnd = 2;
    public const byte ProcessDCStart = 3;
    public const byte ProcessDCEnd = 4;
    public const byte ProcessDefunct = 39;

    // PerfInfo task
    public const byte SysClEnter = 51;
    public const byte SysClExit = 52;

    /// <summary>StackWalk: the call stack of the event logged just before it on the same CPU.</summary>
    public static readonly Guid StackWalkGuid = new("def2fe46-7bd6-4b80-bd94-f57fe20d0ce3");
    public const byte StackWalkStack = 32;
    /// <summary>
    /// Stack caching (xperf -stackcompression; WPR): a key's frames when it leaves the cache (delete) or at the
    /// session's end (rundown), <c>ptr StackKey; ptr Frames[]</c>; an event's reference to the cached kernel or user
    /// part of its stack, <c>u64 EventTimeStamp; u32 StackProcess; u32 StackThread; ptr StackKey</c>.
    /// </summary>
    public const byte StackWalkKeyDelete = 35;
    public const byte StackWalkKeyRundown = 36;
    public const byte StackWalkKeyKernel = 37;
    public const byte StackWalkKeyUser = 38;

    /// <summary>Image: where a module is loaded in a process (ImageLoad, its rundown, unload).</summary>
    public static readonly Guid ImageGuid = new("2cb15d1d-5fc1-11d2-abe1-00a0c91e2b9f");
    public const byte ImageUnload = 2;
    public const byte ImageDCStart = 3;
    public const byte ImageDCEnd = 4;
    public const byte ImageLoad = 10;
}
