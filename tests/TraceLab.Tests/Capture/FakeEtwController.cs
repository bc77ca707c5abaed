using System.Buffers.Binary;
using TraceLab.Capture.Windows;

namespace TraceLab.Tests.Capture;

/// <summary>
/// Stands in for ETW's session API (which needs Windows) to test the logic around it: which sessions are stopped,
/// what a session is started with, when it is stopped, and what is reported. It claims nothing about the kernel.
/// </summary>
internal sealed class FakeEtwController : IEtwSessionController
{
    /// <summary>
    /// What the fake session "records": an .etl's header buffer alone (buffer header, BufferType 4, then the
    /// logfile header event's SYSTEM_TRACE_HEADER), so TraceLab recognises the file as .etl by its content.
    /// </summary>
    public static byte[] HeaderBuffer { get; } = BuildHeaderBuffer();

    private static byte[] BuildHeaderBuffer()
    {
        var b = new byte[0x48 + 0x20];
        BinaryPrimitives.WriteUInt32LittleEndian(b, (uint)b.Length);           // BufferSize
        BinaryPrimitives.WriteUInt32LittleEndian(b.AsSpan(0x30), (uint)b.Length); // Offset (filled bytes)
        BinaryPrimitives.WriteUInt16LittleEndian(b.AsSpan(0x36), 4);            // BufferType HEADER
        BinaryPrimitives.WriteUInt32LittleEndian(b.AsSpan(0x48), 0xC0020002);   // marker: SYSTEM64, version 2
        BinaryPrimitives.WriteUInt16LittleEndian(b.AsSpan(0x4C), 0x20);         // Size; HookId 0 follows
        return b;
    }

    public bool Elevated { get; set; } = true;
    public List<string> Active { get; } = [];
    public List<string> StopCalls { get; } = [];
    public HashSet<string> RefuseToStop { get; } = [];
    public List<EtwSessionSettings> Started { get; } = [];
    public Exception? StartFailure { get; set; }
    public int EventsLostWhileRunning { get; set; }
    public FakeRecording? Last { get; private set; }

    public bool IsElevated() => Elevated;

    public IReadOnlyList<string> ActiveSessionNames() => Active.ToList();

    public bool StopSession(string name)
    {
        StopCalls.Add(name);
        if (RefuseToStop.Contains(name)) throw new UnauthorizedAccessException("Access is denied");
        return Active.Remove(name);
    }

    public IEtwRecordingSession Start(EtwSessionSettings settings)
    {
        if (StartFailure is not null) throw StartFailure;
        Started.Add(settings);
        Active.Add(settings.Name);
        // The kernel creates the file when the session starts; events are written to it while it runs.
        File.WriteAllBytes(settings.EtlPath, HeaderBuffer);
        Last = new FakeRecording(this, settings.Name);
        return Last;
    }

    internal sealed class FakeRecording(FakeEtwController owner, string name) : IEtwRecordingSession
    {
        public string Name => name;
        public IReadOnlyList<string> Notes => [];
        public int StopCount { get; private set; }
        public bool Disposed { get; private set; }
        public bool Running => owner.Active.Contains(name);

        // Like ETW's query, the counter is only there while the session runs.
        public int EventsLost => Running ? owner.EventsLostWhileRunning : 0;

        public void Stop()
        {
            StopCount++;
            owner.Active.Remove(name);
        }

        public void Dispose()
        {
            Disposed = true;
            Stop();
        }
    }
}
