using TraceLab.Formats.Etw;

namespace TraceLab.Formats.Etl;

/// <summary>
/// The newest payload version TraceLab decodes for each event it maps (layouts in docs/formats.md, ".etl"). A newer
/// version may have moved fields, so such an event is not decoded: skipped, counted and reported instead.
/// </summary>
internal static class EtlKnownVersions
{
    public const int Thread = 4;
    public const int CSwitch = 4;
    public const int ReadyThread = 2;
    public const int ThreadSetName = 2;
    public const int Process = 5;
    public const int SysCall = 2;

    public static bool IsNewer(Guid guid, byte opcode, byte version)
    {
        if (version <= 2) return false;
        if (guid == EtwKernelEvents.ThreadGuid)
        {
            return opcode switch
            {
                EtwKernelEvents.ThreadStart or EtwKernelEvents.ThreadEnd or EtwKernelEvents.ThreadDCStart
                    or EtwKernelEvents.ThreadDCEnd => version > Thread,
                EtwKernelEvents.CSwitch => version > CSwitch,
                EtwKernelEvents.ReadyThread => version > ReadyThread,
                EtwKernelEvents.ThreadSetName => version > ThreadSetName,
                _ => false,
            };
        }

        if (guid == EtwKernelEvents.ProcessGuid) return version > Process;
        if (guid == EtwKernelEvents.PerfInfoGuid)
            return opcode is EtwKernelEvents.SysClEnter or EtwKernelEvents.SysClExit && version > SysCall;
        return false;
    }
}
