namespace TraceLab.Formats.Etw;

/// <summary>KTHREAD_STATE, as logged in CSwitch.OldThreadState.</summary>
public enum KThreadState : byte
{
    Initialized = 0,
    Ready = 1,
    Running = 2,
    Standby = 3,
    Terminated = 4,
    Waiting = 5,
    Transition = 6,
    DeferredReady = 7,
    GateWaitObsolete = 8,
    WaitingForProcessOutSwap = 9,
}
