using System.Buffers.Binary;
using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
using TraceLab.Core;

namespace TraceLab.Formats.Journal;

/// <summary>
/// Every event a reader delivered in the first pass, with every change it made to its thread table in between, in
/// the order it made them, written to a temporary file; <see cref="Replay"/> reads them back as a reader of that trace
/// would deliver them (docs/performance.md#event-journal). For the focused timeline's second pass, which would
/// otherwise read and decode the trace again: the journal is written by the reading thread while the analyses run on
/// another (it has time to spare there), and read back at a fraction of a trace reader's cost.
/// </summary>
/// <remarks>
/// Exact by construction: the events are packed losslessly (<see cref="KernelEventPacking"/>), and the thread table a
/// replay hands out starts as the reader's did (a copy taken before the first event) and changes at the same events,
/// so the analyses, which read it while they run, see what they would have seen from a second reader of the file.
/// Never a reason to fail: a journal that cannot be written (no temporary directory, a full disk, over its size
/// limit, a change to the table from another thread than the reading one) is given up, and the second pass reads the
/// trace as before. The file is unlinked as soon as it is made (on Windows, removed when closed), so nothing is left
/// behind whatever happens to the process.
/// </remarks>
public sealed class EventJournal : IKernelEventSink, IThreadTableChanges, IDisposable
{
    /// <summary>Bytes buffered before a write: one block of the file, whose records never straddle two.</summary>
    private const int BlockBytes = 1 << 20;

    private const byte EventRecord = 0;
    private const byte TextRecord = 1;
    private const byte NameRecord = 2;
    private const byte NameAtRecord = 3;
    private const byte ProcessRecord = 4;

    /// <summary>The most bytes a record other than an event or a text takes before its string.</summary>
    private const int RecordHeaderBytes = 1 + 4 + 8 + 4;

    private readonly SafeFileHandle _file;
    private readonly ThreadTable _threads;
    private readonly ThreadTable _threadsBefore;
    private readonly TraceInfo _info;
    private readonly long _maxBytes;
    private readonly int _writerThread;
    private readonly string?[] _text = new string?[1];
    private byte[]? _block = new byte[BlockBytes];
    private int _used;
    private long _written;
    private bool _finished;
    /// <summary>Set by another thread that changed the table: the journal is given up at <see cref="Finish"/>
    /// (the reading thread's buffer is not touched from there).</summary>
    private volatile bool _changedElsewhere;

    private EventJournal(SafeFileHandle file, IKernelTraceReader reader, long maxBytes)
    {
        _file = file;
        _threads = reader.Threads;
        _threadsBefore = reader.Threads.Copy();
        _info = reader.Info;
        _maxBytes = maxBytes;
        _writerThread = Environment.CurrentManagedThreadId;
        _threads.Changes = this;
    }

    /// <summary>Why the journal was given up (null while it holds every event so far).</summary>
    public string? GivenUp { get; private set; }

    /// <summary>Bytes the journal's file holds.</summary>
    public long Bytes => _written;

    /// <summary>Events journaled.</summary>
    public long Events { get; private set; }

    /// <summary>
    /// Starts a journal of what <paramref name="reader"/> delivers; call before its
    /// <see cref="IKernelTraceReader.Read"/>, on the thread that will read. Null when no temporary file can be made.
    /// </summary>
    /// <param name="reader">The reader, opened and not read yet.</param>
    /// <param name="maxBytes">
    /// The journal's size limit: past it, it is given up. Never more than half the free space of its directory, so
    /// that a journal never fills a small temporary file system that others write to.
    /// </param>
    /// <param name="directory">Where the file goes (null: the system's temporary directory).</param>
    public static EventJournal? Start(IKernelTraceReader reader, long maxBytes, string? directory = null)
    {
        ArgumentNullException.ThrowIfNull(reader);
        if (reader.Threads.Changes is not null) return null;
        try
        {
            directory ??= Path.GetTempPath();
            var path = Path.Combine(directory, $"tracelab-journal-{Path.GetRandomFileName()}");
            var file = File.OpenHandle(path, FileMode.CreateNew, FileAccess.ReadWrite, FileShare.Delete,
                FileOptions.DeleteOnClose);
            if (!OperatingSystem.IsWindows()) File.Delete(path);
            return new EventJournal(file, reader, Math.Min(maxBytes, FreeBytes(directory) / 2));
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or ArgumentException
            or NotSupportedException)
        {
            return null;
        }
    }

    /// <summary>The space free to this user where <paramref name="directory"/> is; unlimited when unknown.</summary>
    private static long FreeBytes(string directory)
    {
        try
        {
            return new DriveInfo(OperatingSystem.IsWindows() ? Path.GetPathRoot(directory)! : directory)
                .AvailableFreeSpace;
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or ArgumentException)
        {
            return long.MaxValue;
        }
    }

    public void OnEvent(in KernelEvent e)
    {
        if (_block is null) return;
        if (e.Text is { } text) WriteText(text);
        if (!Room(1 + KernelEventPacking.MaxBytes)) return;
        var block = _block!;
        block[_used] = EventRecord;
        var textCount = 0;
        _used += 1 + KernelEventPacking.Pack(e, block, _used + 1, _text, ref textCount);
        _text[0] = null;
        Events++;
    }

    void IThreadTableChanges.Name(int tid, string name)
    {
        if (!OnWriterThread() || !Room(RecordHeaderBytes)) return;
        _block![_used] = NameRecord;
        BinaryPrimitives.WriteInt32LittleEndian(_block.AsSpan(_used + 1), tid);
        _used += 5;
        WriteString(name);
    }

    void IThreadTableChanges.NameAt(int tid, string name, long at)
    {
        if (!OnWriterThread() || !Room(RecordHeaderBytes)) return;
        _block![_used] = NameAtRecord;
        BinaryPrimitives.WriteInt32LittleEndian(_block.AsSpan(_used + 1), tid);
        BinaryPrimitives.WriteInt64LittleEndian(_block.AsSpan(_used + 5), at);
        _used += 13;
        WriteString(name);
    }

    void IThreadTableChanges.Process(int tid, int pid)
    {
        if (!OnWriterThread() || !Room(RecordHeaderBytes)) return;
        _block![_used] = ProcessRecord;
        BinaryPrimitives.WriteInt32LittleEndian(_block.AsSpan(_used + 1), tid);
        BinaryPrimitives.WriteInt32LittleEndian(_block.AsSpan(_used + 5), pid);
        _used += 9;
    }

    /// <summary>
    /// The reader has delivered its last event: writes what is buffered and stops following its thread table. Call
    /// once, on the reading thread, after a read that ended normally (a read that failed or was cancelled leaves
    /// nothing to replay).
    /// </summary>
    public void Finish()
    {
        if (_finished) return;
        _finished = true;
        _threads.Changes = null;
        if (_changedElsewhere) GiveUp("the thread table was changed on another thread than the reading one");
        if (_block is not null) Flush();
        _block = null;
    }

    /// <summary>
    /// A reader that delivers the journaled events, its thread table changing as the first reader's did; null when
    /// the journal was given up or not finished.
    /// </summary>
    public IKernelTraceReader? Replay() => CanReplay ? new JournalReader(this) : null;

    /// <summary>Finished with every event journaled: <see cref="Replay"/> gives a reader.</summary>
    public bool CanReplay => _finished && GivenUp is null;

    public void Dispose()
    {
        if (ReferenceEquals(_threads.Changes, this)) _threads.Changes = null;
        _block = null;
        _file.Dispose();
    }

    private bool OnWriterThread()
    {
        if (Environment.CurrentManagedThreadId == _writerThread) return _block is not null;
        _changedElsewhere = true;
        return false;
    }

    /// <summary>True when the block has room for <paramref name="bytes"/> more (writing it out first if needed).
    /// </summary>
    private bool Room(int bytes)
    {
        if (_block is null) return false;
        if (_used + bytes <= BlockBytes) return true;
        if (bytes > BlockBytes) return GiveUp("a record larger than a block");
        return Flush();
    }

    private void WriteText(string text)
    {
        if (!Room(1)) return;
        _block![_used++] = TextRecord;
        WriteString(text);
    }

    /// <summary>A string as its length in UTF-16 code units, then those units.</summary>
    private void WriteString(string s)
    {
        var bytes = MemoryMarshal.AsBytes(s.AsSpan());
        if (!Room(4 + bytes.Length)) return;
        BinaryPrimitives.WriteInt32LittleEndian(_block!.AsSpan(_used), s.Length);
        bytes.CopyTo(_block.AsSpan(_used + 4));
        _used += 4 + bytes.Length;
    }

    /// <summary>Writes the block as its length, then its bytes; false (the journal given up) when that fails.</summary>
    private bool Flush()
    {
        if (_used == 0) return true;
        if (_written + 4 + _used > _maxBytes) return GiveUp($"over its limit of {_maxBytes:N0} bytes");
        try
        {
            Span<byte> length = stackalloc byte[4];
            BinaryPrimitives.WriteInt32LittleEndian(length, _used);
            RandomAccess.Write(_file, length, _written);
            RandomAccess.Write(_file, _block.AsSpan(0, _used), _written + 4);
            _written += 4 + _used;
            _used = 0;
            return true;
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return GiveUp(ex.Message);
        }
    }

    private bool GiveUp(string why)
    {
        GivenUp ??= why;
        _block = null;
        _threads.Changes = null;
        return false;
    }

    /// <summary>
    /// The journal read back: events in the order journaled, the table changes applied between them, to a copy of the
    /// table as the first reader had it before its first event.
    /// </summary>
    private sealed class JournalReader(EventJournal journal) : IKernelTraceReader
    {
        public TraceInfo Info => journal._info;

        public ThreadTable Threads { get; } = journal._threadsBefore.Copy();

        public void Read(IKernelEventSink sink, CancellationToken cancellationToken = default)
        {
            var block = new byte[BlockBytes];
            var text = new string?[1];
            var e = default(KernelEvent);
            Span<byte> length = stackalloc byte[4];
            for (long at = 0; at < journal._written;)
            {
                cancellationToken.ThrowIfCancellationRequested();
                RandomAccess.Read(journal._file, length, at);
                var used = BinaryPrimitives.ReadInt32LittleEndian(length);
                if (RandomAccess.Read(journal._file, block.AsSpan(0, used), at + 4) != used)
                    throw new IOException("the event journal's file is shorter than written");
                at += 4 + used;
                for (var i = 0; i < used;)
                {
                    switch (block[i++])
                    {
                        case EventRecord:
                            i += KernelEventPacking.Unpack(block, i, text, ref e);
                            text[0] = null;
                            sink.OnEvent(in e);
                            break;
                        case TextRecord:
                            text[0] = ReadString(block, ref i);
                            break;
                        case NameRecord:
                            {
                                var tid = BinaryPrimitives.ReadInt32LittleEndian(block.AsSpan(i));
                                i += 4;
                                Threads.SetName(tid, ReadString(block, ref i));
                                break;
                            }
                        case NameAtRecord:
                            {
                                var tid = BinaryPrimitives.ReadInt32LittleEndian(block.AsSpan(i));
                                var time = BinaryPrimitives.ReadInt64LittleEndian(block.AsSpan(i + 4));
                                i += 12;
                                Threads.AddNameChange(tid, ReadString(block, ref i), time);
                                break;
                            }
                        case ProcessRecord:
                            Threads.SetProcess(BinaryPrimitives.ReadInt32LittleEndian(block.AsSpan(i)),
                                BinaryPrimitives.ReadInt32LittleEndian(block.AsSpan(i + 4)));
                            i += 8;
                            break;
                        default:
                            throw new InvalidDataException($"the event journal has an unknown record at {at + i}");
                    }
                }
            }
        }

        private static string ReadString(byte[] block, ref int i)
        {
            var chars = BinaryPrimitives.ReadInt32LittleEndian(block.AsSpan(i));
            var s = new string(MemoryMarshal.Cast<byte, char>(block.AsSpan(i + 4, chars * 2)));
            i += 4 + chars * 2;
            return s;
        }

        /// <summary>The journal is the caller's: it outlives its replays.</summary>
        public void Dispose()
        {
        }
    }
}
