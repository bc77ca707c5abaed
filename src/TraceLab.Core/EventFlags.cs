namespace TraceLab.Core;

/// <summary>ftrace common_flags bits (kernel/trace/trace.h, TRACE_FLAG_*), as far as TraceLab needs them.</summary>
public static class EventFlags
{
    public const byte IrqsOff = 0x01;
    public const byte HardIrq = 0x08;
    public const byte SoftIrq = 0x10;
    public const byte Nmi = 0x40;

    /// <summary>
    /// The event was logged from interrupt context: common_pid is the interrupted thread, not the actor.
    /// </summary>
    public static bool InInterrupt(byte flags) => (flags & (HardIrq | SoftIrq | Nmi)) != 0;
}
