namespace TraceLab.Core;

/// <summary>
/// The changes made to a <see cref="ThreadTable"/> (<see cref="ThreadTable.Changes"/>), each as it is made: applied
/// in the same order to a copy of the table as it was before the first (<see cref="ThreadTable.SetName(int, string)"/>,
/// <see cref="ThreadTable.AddNameChange"/>, <see cref="ThreadTable.SetProcess"/>), they leave it the same.
/// </summary>
public interface IThreadTableChanges
{
    /// <summary><paramref name="tid"/>'s current name is now <paramref name="name"/>.</summary>
    void Name(int tid, string name);

    /// <summary>The history has a change of <paramref name="tid"/>'s name to <paramref name="name"/> at
    /// <paramref name="at"/>.</summary>
    void NameAt(int tid, string name, long at);

    /// <summary><paramref name="tid"/> is now said to belong to process <paramref name="pid"/>.</summary>
    void Process(int tid, int pid);
}
