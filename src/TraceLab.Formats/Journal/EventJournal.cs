using System.Buffers.Binary;
using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
using TraceLab.Core;

namespace TraceLab.Formats.Journal;

/// <summary>
/// Every event a reader delivered in the first pass, written to a temporary file, and every change the reader made to
/// its thread table in between, kept with the number of events delivered before it; <see cref="Replay"/> reads them
/// back as a reader of that trace would deliver them (docs/performance.md#event-journal). For the focused timeline's
/// second pass, which would otherwise read and decode the trace again: read back at a fraction of a trace reader's
/// cost.
/// </summary>
/// <remarks>
/// <para>
/// Exact by construction: the events are packed losslessly (<see cref="KernelEventPacking"/>), and the thread table a
/// replay hands out starts as the reader's did (a copy taken before the first event) and changes at the same events,
/// so the analyses, which read it while they run, see what they would have seen from a second reader of the file.
/// </para>
/// <para>
/// The events come one at a time (<see cref="OnEvent"/>, as the reader delivers them) or a batch at a time as the
/// reading thread hands them to the analysis threads (<see cref="IEventBatchRecorder"/>: the bytes it packed for
/// that hand-off are kept as they are, docs/performance.md#journal-batches). A batch is journaled after the reader
/// delivered its events, so the reader's changes to its table are then placed by the count of events it had
/// delivered (<see cref="CountedOnReadingThread"/>), not by the count journaled.
/// </para>
/// <para>
/// Never a reason to fail: a journal that cannot be written (no temporary directory, a full disk, over its size
/// limit, a change to the table from another thread than the reading one) is given up, and the second pass reads the
/// trace as before. The file is unlinked as soon as it is made (on Windows, removed when closed), so nothing is left
/// behind whatever happens to the process.
/// </para>
/// </remarks>
public sealed class EventJournal : IKernelEventSink, IEventBatchRecorder, IThreadTableChanges, IDisposable
{
    /// <summary>Bytes buffered before a write: one block of the file, whose records never straddle two.</summary>
    private const int BlockBytes = 1 << 20;

    private const byte EventRecord = 0;
    private const byte TextRecord = 1;
    /// <summary>Events packed one after another: their count, their texts' count, their bytes' length, the texts,
    /// the bytes.</summary>
    private const byte BatchRecord = 2;
    private const int BatchHeaderBytes = 1 + 4 + 4 + 4;

    private enum ChangeKind : byte
    {
        Name,
        NameAt,
        Process,
    }

    /// <summary>
    /// A change to the thread table, after <paramref name="Position"/> events were delivered (before the next one).
    /// </summary>
    private readonly record struct TableChange(long Position, ChangeKind Kind, int Tid, int Pid, long At, string? Name);

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
    /// <summary>Set by another thread that changed the table: the journal is given up at <see cref="Finish"/>.
    /// </summary>
    private volatile bool _changedElsewhere;
    /// <summary>Why the journal was given up.</summary>
    private string? _givenUp;
    /// <summary>The table's changes, in the order made (on the reading thread; bounded by the trace's threads).
    /// </summary>
    private readonly List<TableChange> _changes = [];
    /// <summary>The reading thread's count of the events it delivered (<see cref="CountedOnReadingThread"/>).
    /// </summary>
    private long _delivered;
    /// <summary>Whether the events are counted as delivered; if not, they are journaled as delivered.</summary>
    private bool _counted;

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
    public string? GivenUp => _givenUp;

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

    /// <summary>
    /// Where the reading thread delivers its events when they reach the journal later, a batch at a time: counts
    /// them, so that each change to the table is placed between the events it came between, then passes them to
    /// <paramref name="sink"/> (which batches them). Call before the read, on the reading thread.
    /// </summary>
    public IKernelEventSink CountedOnReadingThread(IKernelEventSink sink)
    {
        ArgumentNullException.ThrowIfNull(sink);
        _counted = true;
        return new DeliveryCount(this, sink);
    }

    /// <summary>Journals the next event, as the reader delivers it.</summary>
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

    /// <summary>Journals a batch of events the reader packed for the hand-off, its bytes as they are.</summary>
    public void Packed(ReadOnlySpan<byte> bytes, int count, ReadOnlySpan<string?> texts)
    {
        if (_block is null || count == 0) return;
        var size = BatchHeaderBytes + (long)bytes.Length;
        foreach (var text in texts) size += 4 + 2L * text!.Length;
        if (size > BlockBytes)
        {
            // Texts too long for one block (never seen): the events one by one, each with its text.
            OneByOne(bytes, count, texts);
            return;
        }
        if (!Room((int)size)) return;
        var block = _block!;
        block[_used] = BatchRecord;
        BinaryPrimitives.WriteInt32LittleEndian(block.AsSpan(_used + 1), count);
        BinaryPrimitives.WriteInt32LittleEndian(block.AsSpan(_used + 5), texts.Length);
        BinaryPrimitives.WriteInt32LittleEndian(block.AsSpan(_used + 9), bytes.Length);
        _used += BatchHeaderBytes;
        foreach (var text in texts) WriteString(text!);
        bytes.CopyTo(block.AsSpan(_used));
        _used += bytes.Length;
        Events += count;
    }

    private void OneByOne(ReadOnlySpan<byte> bytes, int count, ReadOnlySpan<string?> texts)
    {
        var packed = bytes.ToArray();
        var textArray = texts.ToArray();
        var e = default(KernelEvent);
        for (int n = 0, at = 0; n < count; n++)
        {
            at += KernelEventPacking.Unpack(packed, at, textArray, ref e);
            OnEvent(e);
        }
    }

    /// <summary>Journals a batch of events the reader handed over whole: packed here, one by one.</summary>
    public void Whole(ReadOnlySpan<KernelEvent> events)
    {
        foreach (ref readonly var e in events) OnEvent(e);
    }

    void IThreadTableChanges.Name(int tid, string name) => Note(ChangeKind.Name, tid, 0, 0, name);

    void IThreadTableChanges.NameAt(int tid, string name, long at) => Note(ChangeKind.NameAt, tid, 0, at, name);

    void IThreadTableChanges.Process(int tid, int pid) => Note(ChangeKind.Process, tid, pid, 0, null);

    private void Note(ChangeKind kind, int tid, int pid, long at, string? name)
    {
        if (Environment.CurrentManagedThreadId != _writerThread)
        {
            _changedElsewhere = true;
            return;
        }
        if (_givenUp is not null || _finished) return;
        _changes.Add(new TableChange(_counted ? _delivered : Events, kind, tid, pid, at, name));
    }

    /// <summary>
    /// The reader has delivered its last event and the journal has been given it (with the last batch, when it takes
    /// batches: after the hand-off has finished): writes what is buffered and stops following the thread table. Call
    /// once, on the reading thread, after a read that ended normally (a read that failed or was cancelled leaves
    /// nothing to replay).
    /// </summary>
    public void Finish()
    {
        if (_finished) return;
        _finished = true;
        _threads.Changes = null;
        if (_changedElsewhere) GiveUp("the thread table was changed on another thread than the reading one");
        else if (_counted && _givenUp is null && _delivered != Events)
            GiveUp($"{Events:N0} of {_delivered:N0} delivered events journaled");
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
        // The record's mark and its string in one block: a flush between them would leave the mark at the end of a
        // block with its string in the next.
        var size = 1 + 4 + 2L * text.Length;
        if (size > BlockBytes)
        {
            GiveUp("a text larger than a block");
            return;
        }
        if (!Room((int)size)) return;
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

    /// <summary>Stops journaling; the table stays followed until <see cref="Finish"/>.</summary>
    private bool GiveUp(string why)
    {
        _givenUp ??= why;
        _block = null;
        return false;
    }

    /// <summary>The reading thread's count of what it delivers, in front of the sink that batches it.</summary>
    private sealed class DeliveryCount(EventJournal journal, IKernelEventSink sink) : IKernelEventSink
    {
        public void OnEvent(in KernelEvent e)
        {
            journal._delivered++;
            sink.OnEvent(in e);
        }
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
            var texts = new string?[16];
            var changes = journal._changes;
            var change = 0;
            long delivered = 0;
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
                            while (change < changes.Count && changes[change].Position == delivered)
                                Apply(changes[change++]);
                            sink.OnEvent(in e);
                            delivered++;
                            break;
                        case TextRecord:
                            text[0] = ReadString(block, ref i);
                            break;
                        case BatchRecord:
                            {
                                var count = BinaryPrimitives.ReadInt32LittleEndian(block.AsSpan(i));
                                var textCount = BinaryPrimitives.ReadInt32LittleEndian(block.AsSpan(i + 4));
                                var byteCount = BinaryPrimitives.ReadInt32LittleEndian(block.AsSpan(i + 8));
                                i += 12;
                                if (texts.Length < textCount) texts = new string?[textCount];
                                for (var t = 0; t < textCount; t++) texts[t] = ReadString(block, ref i);
                                var end = i + byteCount;
                                for (var n = 0; n < count; n++)
                                {
                                    i += KernelEventPacking.Unpack(block, i, texts, ref e);
                                    while (change < changes.Count && changes[change].Position == delivered)
                                        Apply(changes[change++]);
                                    sink.OnEvent(in e);
                                    delivered++;
                                }
                                if (i != end)
                                    throw new InvalidDataException($"the event journal's batch at {at + i} is damaged");
                                Array.Clear(texts, 0, textCount);
                                break;
                            }
                        default:
                            throw new InvalidDataException($"the event journal has an unknown record at {at + i}");
                    }
                }
            }
            while (change < changes.Count) Apply(changes[change++]);
        }

        private void Apply(in TableChange change)
        {
            switch (change.Kind)
            {
                case ChangeKind.Name:
                    Threads.SetName(change.Tid, change.Name!);
                    break;
                case ChangeKind.NameAt:
                    Threads.AddNameChange(change.Tid, change.Name!, change.At);
                    break;
                default:
                    Threads.SetProcess(change.Tid, change.Pid);
                    break;
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
