using System.Globalization;
using System.Text;

namespace TraceLab.Formats.Symbols;

/// <summary>
/// The printed tree: a type prints a left part and a right part around a declarator ("void (*" … ")(int)").
/// </summary>
public static partial class ItaniumDemangler
{
    private abstract class Node
    {
        /// <summary>Prints around a declarator: arrays and functions put their part after it.</summary>
        public virtual bool HasRight => false;
        public virtual bool IsFunction => false;
        public virtual bool IsArray => false;
        public abstract void Left(StringBuilder o);
        public virtual void Right(StringBuilder o) { }

        public void Print(StringBuilder o)
        {
            if (o.Length > MaxPrinted) throw new NotDemangled();
            Left(o);
            Right(o);
        }

        public override string ToString()
        {
            var o = new StringBuilder();
            Print(o);
            return o.ToString();
        }
    }

    private sealed class Text(string text) : Node
    {
        public string Value { get; } = text;
        public override void Left(StringBuilder o)
        {
            if (o.Length > MaxPrinted) throw new NotDemangled();
            o.Append(Value);
        }
    }

    private sealed class Nested(Node prefix, Node name) : Node
    {
        public Node Name { get; } = name;
        public override void Left(StringBuilder o)
        {
            prefix.Print(o);
            o.Append("::");
            Name.Print(o);
        }
    }

    private sealed class Templated(Node name, Node[] args) : Node
    {
        public Node Name { get; } = name;
        public override void Left(StringBuilder o)
        {
            Name.Print(o);
            PrintArgs(o, args);
        }

        public static void PrintArgs(StringBuilder o, Node[] args)
        {
            // "operator<< <…>", never "operator<<<…>".
            if (o.Length > 0 && o[^1] == '<') o.Append(' ');
            o.Append('<');
            var separatorTakenBack = PrintList(o, args);
            // GNU writes "> >", never ">>" — except after an empty pack that was not the first argument: it wrote ", "
            // for it, took the two characters back, and still remembers the space as the last one written.
            if (o[^1] == '>' && !separatorTakenBack) o.Append(' ');
            o.Append('>');
        }
    }

    /// <summary>Items separated by ", "; true when the last item was an empty pack after another item.</summary>
    private static bool PrintList(StringBuilder o, Node[] items)
    {
        var first = true;
        var takenBack = false;
        for (var i = 0; i < items.Length; i++)
        {
            var item = items[i];
            if (item is Pack pack && pack.IsEmpty)
            {
                takenBack = i > 0;
                continue;
            }

            if (!first) o.Append(", ");
            first = false;
            takenBack = false;
            item.Print(o);
        }

        return takenBack;
    }

    /// <summary>A template argument pack (J … E), printed as its elements.</summary>
    private sealed class Pack(Node[] items) : Node
    {
        public Node[] Items { get; } = items;
        /// <summary>Prints nothing: no items, or only empty packs (an expansion of an empty pack in a pack).</summary>
        public bool IsEmpty => Items.All(i => i is Pack { IsEmpty: true });
        public override void Left(StringBuilder o) => _ = PrintList(o, Items);
    }

    private sealed class AbiTagged(Node name, string tag) : Node
    {
        public Node Name { get; } = name;
        public override void Left(StringBuilder o)
        {
            Name.Print(o);
            o.Append("[abi:").Append(tag).Append(']');
        }
    }

    /// <summary>A type with const/volatile/restrict, written after it as GNU does ("char const").</summary>
    private sealed class Qualified(Node inner, string qualifiers) : Node
    {
        /// <summary>Qualifiers on a type that has some (through a substitution): one run, as GNU prints it.</summary>
        public static Node Of(Node inner, string qualifiers)
        {
            if (inner is Pack pack) return new Pack([.. pack.Items.Select(item => Of(item, qualifiers))]);
            if (inner is not Qualified q) return new Qualified(inner, qualifiers);
            string[] order = [" const", " volatile", " restrict"];
            var merged = string.Concat(order.Where(x => q.Qualifiers.Contains(x, StringComparison.Ordinal)
                || qualifiers.Contains(x, StringComparison.Ordinal)));
            return new Qualified(q.Inner, merged);
        }

        public Node Inner { get; } = inner;
        public string Qualifiers { get; } = qualifiers;

        public override bool HasRight => Inner.HasRight;
        public override bool IsFunction => Inner.IsFunction;
        public override bool IsArray => Inner.IsArray;
        public override void Left(StringBuilder o)
        {
            Inner.Left(o);
            if (!Inner.IsFunction) o.Append(Qualifiers);
        }

        public override void Right(StringBuilder o)
        {
            Inner.Right(o);
            if (Inner.IsFunction) o.Append(Qualifiers);
        }
    }

    /// <summary>Pointer ("*"), lvalue ("&amp;") and rvalue ("&amp;&amp;") references.</summary>
    private sealed class Pointer(Node pointee, string sigil) : Node
    {
        public Node Pointee { get; } = pointee;
        public string Sigil { get; } = sigil;
        public override bool HasRight => Pointee.HasRight;
        public override void Left(StringBuilder o)
        {
            Pointee.Left(o);
            if (Pointee.IsArray) o.Append(' ');
            if (Pointee.IsArray || Pointee.IsFunction) o.Append('(');
            o.Append(Sigil);
        }

        public override void Right(StringBuilder o)
        {
            if (Pointee.IsArray || Pointee.IsFunction) o.Append(')');
            Pointee.Right(o);
        }
    }

    private sealed class MemberPointer(Node owner, Node member) : Node
    {
        public override bool HasRight => member.HasRight;
        public override void Left(StringBuilder o)
        {
            member.Left(o);
            if (member.IsArray) o.Append(' ');
            if (member.IsArray || member.IsFunction) o.Append('(');
            else o.Append(' ');
            owner.Print(o);
            o.Append("::*");
        }

        public override void Right(StringBuilder o)
        {
            if (member.IsArray || member.IsFunction) o.Append(')');
            member.Right(o);
        }
    }

    private sealed class ArrayOf(Node element, string dimension) : Node
    {
        public override bool HasRight => true;
        public override bool IsArray => true;
        public override void Left(StringBuilder o) => element.Left(o);
        public override void Right(StringBuilder o)
        {
            if (o.Length == 0 || o[^1] != ']') o.Append(' ');
            o.Append('[').Append(dimension).Append(']');
            element.Right(o);
        }
    }

    private sealed class FunctionType(Node returns, Node[] parameters, string qualifiers) : Node
    {
        public override bool HasRight => true;
        public override bool IsFunction => true;
        public override void Left(StringBuilder o)
        {
            returns.Left(o);
            // "int (*(*)())()": a returned function pointer's "(*" takes no space after it.
            if (!returns.HasRight) o.Append(' ');
        }

        public override void Right(StringBuilder o)
        {
            PrintParameters(o, parameters);
            returns.Right(o);
            o.Append(qualifiers);
        }
    }

    private static void PrintParameters(StringBuilder o, Node[] parameters)
    {
        o.Append('(');
        _ = PrintList(o, parameters);
        o.Append(')');
    }

    /// <summary>A function's name with its parameters (and, for a template, its return type first).</summary>
    private sealed class Function(Node? returns, Node name, Node[] parameters, string qualifiers) : Node
    {
        public Node Name { get; } = name;
        public override void Left(StringBuilder o)
        {
            if (returns is not null)
            {
                returns.Left(o);
                if (!returns.HasRight) o.Append(' ');
            }

            Name.Print(o);
        }

        public override void Right(StringBuilder o)
        {
            PrintParameters(o, parameters);
            returns?.Right(o);
            o.Append(qualifiers);
        }
    }

    private sealed class Suffixed(Node inner, string suffix) : Node
    {
        public Node Inner { get; } = inner;
        public override void Left(StringBuilder o)
        {
            Inner.Print(o);
            o.Append(suffix);
        }
    }

    private sealed class Prefixed(string prefix, Node inner) : Node
    {
        public override void Left(StringBuilder o)
        {
            o.Append(prefix);
            inner.Print(o);
        }
    }
}
