using System.Globalization;
using System.Text;

namespace TraceLab.Formats.Symbols;

/// <summary>The parser: one symbol, left to right, the grammar of the ABI's "Mangling" chapter.</summary>
public static partial class ItaniumDemangler
{
    /// <param name="s">The symbol.</param>
    /// <param name="parameters">Functions printed with their parameters, as c++filt does; else as perf script.</param>
    private sealed class Parser(string s, bool parameters)
    {
        private int _at;
        private readonly List<Node> _substitutions = [];
        /// <summary>The template arguments T_ refers to: the last ones of the entity's name.</summary>
        private Node[]? _templateArgs;

        private char Peek(int ahead = 0) => _at + ahead < s.Length ? s[_at + ahead] : '\0';

        private bool Eat(char c)
        {
            if (Peek() != c) return false;
            _at++;
            return true;
        }

        private bool Eat(string text)
        {
            if (string.CompareOrdinal(s, _at, text, 0, text.Length) != 0) return false;
            _at += text.Length;
            return true;
        }

        private void Expect(char c)
        {
            if (!Eat(c)) throw new NotDemangled();
        }

        private static NotDemangled Fail() => new();

        public string Mangled()
        {
            Expect('_');
            Expect('Z');
            var encoding = Encoding(top: true);
            // Without parameters a function is its name alone: no return type, parameters, qualifiers or clones.
            var text = parameters ? encoding.ToString() : encoding switch
            {
                Function function => function.Name.ToString(),
                Suffixed qualified => qualified.Inner.ToString(),
                _ => encoding.ToString(),
            };
            // gcc's clone suffixes: ".cold", ".isra.0", ".constprop.0.isra.0", … each printed as "[clone .x]"; only
            // functions have them (c++filt leaves a variable's "_ZL1x.lto_priv.0" as it is).
            if (_at < s.Length && encoding is not Function) throw Fail();
            while (_at < s.Length)
            {
                if (Peek() != '.' || !IsCloneLetter(Peek(1))) throw Fail();
                var start = _at++;
                while (IsCloneLetter(Peek())) _at++;
                while (Peek() == '.' && char.IsAsciiDigit(Peek(1)))
                {
                    _at++;
                    while (char.IsAsciiDigit(Peek())) _at++;
                }

                if (parameters) text += " [clone " + s[start.._at] + "]";
            }

            return text;
        }

        private static bool IsCloneLetter(char c) => char.IsAsciiLetterLower(c) || c == '_';

        /// <param name="top">The symbol's own encoding (its template arguments stay those T_ refers to).</param>
        /// <param name="local">The function a local name is in: printed without its return type, as GNU does.</param>
        private Node Encoding(bool top = false, bool local = false)
        {
            if (++_depth > MaxDepth) throw Fail();
            try
            {
                return EncodingWithin(top, local);
            }
            finally
            {
                _depth--;
            }
        }

        /// <summary>The substitutions made while a local name's template function was being read, and its
        /// template arguments.</summary>
        private readonly List<(int From, int To, Node[] Scope)> _localScopes = [];

        private Node EncodingWithin(bool top, bool local)
        {
            var firstSubstitution = _substitutions.Count;
            var c = Peek();
            if (c == 'T' || (c == 'G' && Peek(1) is 'V' or 'R' or 'T')) return SpecialName();
            var saved = _templateArgs;
            var name = Name(out var isTemplate, out var cvQualifiers, entity: true);
            if (_at >= s.Length || Peek() == 'E' || Peek() == '.')
            {
                if (!top) _templateArgs = saved;
                return cvQualifiers.Length == 0 ? name : new Suffixed(name, cvQualifiers);
            }

            // A template function's return type is encoded first; nobody else's is.
            Node? returns = isTemplate && !IsCtorDtorName(name) ? Type() : null;
            var parameterTypes = BareFunctionParameters();
            if (local && _templateArgs is { } own && !ReferenceEquals(own, saved))
                _localScopes.Add((firstSubstitution, _substitutions.Count, own));
            if (!top) _templateArgs = saved;
            return new Function(local ? null : returns, name, parameterTypes, cvQualifiers);
        }

        private static bool IsCtorDtorName(Node name)
        {
            var last = name is Templated t ? t.Name : name;
            if (last is Nested n) last = n.Name;
            return last is CtorDtor;
        }

        private Node[] BareFunctionParameters()
        {
            if (Peek() == 'v' && (_at + 1 >= s.Length || Peek(1) == 'E' || Peek(1) == '.'))
            {
                _at++;
                return [];
            }

            var list = new List<Node>();
            do
            {
                // GNU prints an empty pack among parameters as an empty item ("f(int, , char)"): not copied.
                var parameter = Type();
                if (parameter is Pack { IsEmpty: true }) throw Fail();
                list.Add(parameter);
            }
            while (_at < s.Length && Peek() != 'E' && Peek() != '.');
            return [.. list];
        }

        private Node SpecialName()
        {
            if (Eat("TV")) return new Prefixed("vtable for ", Type());
            if (Eat("TT")) return new Prefixed("VTT for ", Type());
            if (Eat("TI")) return new Prefixed("typeinfo for ", Type());
            if (Eat("TS")) return new Prefixed("typeinfo name for ", Type());
            if (Eat("TH")) return new Prefixed("TLS init function for ", TypeName());
            if (Eat("TW")) return new Prefixed("TLS wrapper function for ", TypeName());
            if (Eat("Th"))
            {
                CallOffset('h');
                return new Prefixed("non-virtual thunk to ", Encoding());
            }

            if (Eat("Tv"))
            {
                CallOffset('v');
                return new Prefixed("virtual thunk to ", Encoding());
            }

            if (Eat("Tc"))
            {
                CallOffset(Next());
                CallOffset(Next());
                return new Prefixed("covariant return thunk to ", Encoding());
            }

            if (Eat("TC"))
            {
                var derived = Type();
                Number();
                Expect('_');
                var baseType = Type();
                return new Text("construction vtable for " + baseType + "-in-" + derived);
            }

            if (Eat("GV")) return new Prefixed("guard variable for ", TypeName());
            if (Eat("GTt")) return new Prefixed("transaction clone for ", Encoding());
            if (Eat("GR"))
            {
                var name = TypeName();
                var id = SequenceId();
                Expect('_');
                return new Prefixed("reference temporary #" + id.ToString(CultureInfo.InvariantCulture) + " for ",
                    name);
            }

            throw Fail();
        }

        private char Next() => _at < s.Length ? s[_at++] : throw Fail();

        /// <summary>h &lt;number&gt; _ or v &lt;number&gt; _ &lt;number&gt; _ (the offsets are not printed).</summary>
        private void CallOffset(char kind)
        {
            if (kind == 'h')
            {
                Number();
                Expect('_');
            }
            else if (kind == 'v')
            {
                Number();
                Expect('_');
                Number();
                Expect('_');
            }
            else throw Fail();
        }

        private long Number()
        {
            var negative = Eat('n');
            if (!char.IsAsciiDigit(Peek())) throw Fail();
            long value = 0;
            while (char.IsAsciiDigit(Peek()))
            {
                value = checked((value * 10) + (Next() - '0'));
            }

            return negative ? -value : value;
        }

        /// <param name="isTemplate">The name ends with template arguments (a template function's name).</param>
        /// <param name="cvQualifiers">A member function's qualifiers (" const", …), printed after its
        /// parameters.</param>
        /// <param name="entity">The name of the symbol's entity, whose template arguments T_ then refers to; false for
        /// a type's name.</param>
        private Node Name(out bool isTemplate, out string cvQualifiers, bool entity = false)
        {
            isTemplate = false;
            cvQualifiers = "";
            if (Peek() == 'N') return NestedName(out isTemplate, out cvQualifiers, entity);
            if (Peek() == 'Z') return LocalName(out isTemplate, out cvQualifiers);

            Node name;
            if (Peek() == 'S' && Peek(1) != 't')
            {
                // A substitution can only start an unscoped template name here.
                name = Substitution();
                if (Peek() != 'I') throw Fail();
            }
            else
            {
                var std = Eat("St");
                name = UnqualifiedName(null);
                if (std) name = new Nested(new Text("std"), name);
                if (Peek() != 'I') return name;
                _substitutions.Add(name);
            }

            var args = TemplateArgs();
            if (entity) _templateArgs = args;
            isTemplate = true;
            return new Templated(name, args);
        }

        private Nested LocalName(out bool isTemplate, out string cvQualifiers)
        {
            // A local name's entity may be a local name again (Z…E Z…E …): each holds a level until it returns.
            if (++_depth > MaxDepth) throw Fail();
            try
            {
                return LocalNameWithin(out isTemplate, out cvQualifiers);
            }
            finally
            {
                _depth--;
            }
        }

        private Nested LocalNameWithin(out bool isTemplate, out string cvQualifiers)
        {
            Expect('Z');
            var encoding = Encoding(local: true);
            Expect('E');
            Node entity;
            isTemplate = false;
            cvQualifiers = "";
            if (Eat('s'))
            {
                entity = new Text("string literal");
                Discriminator();
                return new Nested(encoding, entity);
            }

            if (Eat('d'))
            {
                // Default argument scope: Z <encoding> E d [<number>] _ <name>. Rare; not printed the same by all.
                throw Fail();
            }

            entity = Name(out isTemplate, out cvQualifiers, entity: true);
            Discriminator();
            return new Nested(encoding, entity);
        }

        private void Discriminator()
        {
            if (!Eat('_')) return;
            if (Eat('_'))
            {
                Number();
                Expect('_');
                return;
            }

            if (!char.IsAsciiDigit(Peek())) throw Fail();
            _at++;
        }

        private Node NestedName(out bool isTemplate, out string cvQualifiers, bool entity)
        {
            Expect('N');
            cvQualifiers = CvQualifiers();
            if (Eat('R')) cvQualifiers += " &";
            else if (Eat('O')) cvQualifiers += " &&";
            isTemplate = false;
            Node? soFar = null;
            var components = 0;
            var startedWithAbbreviation = false;
            // Each component nests the printed name one level deeper (a::b::c…): counted with the types it holds, so
            // that printing never recurses deeper than MaxDepth levels of either.
            var depthAtStart = _depth;
            while (!Eat('E'))
            {
                isTemplate = false;
                components++;
                if (++_depth > MaxDepth) throw Fail();
                var c = Peek();
                if (c == 'S' && Peek(1) == 't')
                {
                    if (soFar is not null) throw Fail();
                    _at += 2;
                    soFar = new Text("std");
                    startedWithAbbreviation = true;
                    continue;
                }

                if (c == 'S')
                {
                    if (soFar is not null) throw Fail();
                    soFar = Substitution();
                    startedWithAbbreviation = true;
                    continue;
                }

                if (c == 'I')
                {
                    if (soFar is null) throw Fail();
                    var args = TemplateArgs();
                    if (entity) _templateArgs = args;
                    soFar = new Templated(soFar, args);
                    isTemplate = true;
                }
                else if (c == 'T')
                {
                    if (soFar is not null) throw Fail();
                    soFar = TemplateParam();
                }
                else if (c == 'D' && (Peek(1) == 't' || Peek(1) == 'T'))
                {
                    throw Fail();
                }
                else
                {
                    var name = UnqualifiedName(soFar);
                    soFar = soFar is null ? name : new Nested(soFar, name);
                }

                if (Peek() != 'E') _substitutions.Add(soFar);
                // A closure type in a data member's initializer: "member M Ul…".
                if (Peek() == 'M' && Peek(1) == 'U') _at++;
            }

            _depth = depthAtStart;
            // "N St E", "N Ss E": an abbreviation alone names nothing (c++filt refuses it too).
            if (soFar is null || components == 1 && startedWithAbbreviation) throw Fail();
            return soFar;
        }

        /// <summary>Mangled r V K, printed " const volatile restrict" as GNU does.</summary>
        private string CvQualifiers()
        {
            var restrict = Eat('r');
            var isVolatile = Eat('V');
            var isConst = Eat('K');
            return (isConst ? " const" : "") + (isVolatile ? " volatile" : "") + (restrict ? " restrict" : "");
        }

        private Node UnqualifiedName(Node? scope)
        {
            var c = Peek();
            Node name;
            if (char.IsAsciiDigit(c)) name = SourceName();
            else if (c == 'C' || (c == 'D' && Peek(1) is '0' or '1' or '2' or '4' or '5')) name = CtorDtorName(scope);
            else if (c == 'U') name = UnnamedTypeName();
            else if (c == 'L')
            {
                // Internal linkage marker (gcc: "L" before a local-to-file name).
                _at++;
                name = SourceName();
                Discriminator();
            }
            else name = OperatorName();
            var depthAtStart = _depth;
            while (Eat('B'))
            {
                if (++_depth > MaxDepth) throw Fail();
                var lastName = _lastName;
                name = new AbiTagged(name, SourceName().ToString());
                _lastName = lastName;
            }

            _depth = depthAtStart;
            return name;
        }

        /// <summary>
        /// The last source name read outside template arguments: what a constructor or destructor is named after, as
        /// GNU's demangler keeps it (operators and substitutions do not change it, the standard abbreviations do).
        /// </summary>
        private string? _lastName;

        private Text SourceName()
        {
            var length = (int)Number();
            if (length <= 0 || _at + length > s.Length) throw Fail();
            var id = s.Substring(_at, length);
            _at += length;
            _lastName = id;
            // gcc's name for an anonymous namespace.
            if (id.StartsWith("_GLOBAL_", StringComparison.Ordinal) && id.Length > 9 && id[8] is '.' or '_' or '$'
                && id[9] == 'N')
                return new Text("(anonymous namespace)");
            return new Text(id);
        }

        private sealed class CtorDtor(string name) : Node
        {
            public override void Left(StringBuilder o) => o.Append(name);
        }

        private CtorDtor CtorDtorName(Node? scope)
        {
            if (scope is null || _lastName is null) throw Fail();
            var baseName = _lastName;
            if (Eat('C'))
            {
                Eat('I'); // inheriting constructor: C I1 <type>
                var kind = Next();
                if (kind is not ('1' or '2' or '3' or '4' or '5')) throw Fail();
                if (s[_at - 2] == 'I') Type();
                return new CtorDtor(baseName);
            }

            Expect('D');
            var d = Next();
            if (d is not ('0' or '1' or '2' or '4' or '5')) throw Fail();
            return new CtorDtor("~" + baseName);
        }

        private Text UnnamedTypeName()
        {
            if (Eat("Ut"))
            {
                var n = Peek() == '_' ? 1 : Number() + 2;
                Expect('_');
                return new Text("{unnamed type#" + n.ToString(CultureInfo.InvariantCulture) + "}");
            }

            if (Eat("Ul"))
            {
                var parameterTypes = BareFunctionParameters();
                Expect('E');
                var n = Peek() == '_' ? 1 : Number() + 2;
                Expect('_');
                var o = new StringBuilder("{lambda");
                PrintParameters(o, parameterTypes);
                o.Append('#').Append(n.ToString(CultureInfo.InvariantCulture)).Append('}');
                return new Text(o.ToString());
            }

            throw Fail();
        }

        private static readonly Dictionary<string, string> Operators = new (string Code, string Text)[]
        {
            ("nw", "new"), ("na", "new[]"), ("dl", "delete"), ("da", "delete[]"), ("ps", "+"), ("ng", "-"),
            ("ad", "&"), ("de", "*"), ("co", "~"), ("pl", "+"), ("mi", "-"), ("ml", "*"), ("dv", "/"), ("rm", "%"),
            ("an", "&"), ("or", "|"), ("eo", "^"), ("aS", "="), ("pL", "+="), ("mI", "-="), ("mL", "*="),
            ("dV", "/="), ("rM", "%="), ("aN", "&="), ("oR", "|="), ("eO", "^="), ("ls", "<<"), ("rs", ">>"),
            ("lS", "<<="), ("rS", ">>="), ("eq", "=="), ("ne", "!="), ("lt", "<"), ("gt", ">"), ("le", "<="),
            ("ge", ">="), ("ss", "<=>"), ("nt", "!"), ("aa", "&&"), ("oo", "||"), ("pp", "++"), ("mm", "--"),
            ("cm", ","), ("pm", "->*"), ("pt", "->"), ("cl", "()"), ("ix", "[]"), ("qu", "?"), ("aw", "co_await")
        }.ToDictionary(e => e.Code, e => e.Text, StringComparer.Ordinal);

        private Text OperatorName()
        {
            if (_at + 2 > s.Length) throw Fail();
            var code = s.Substring(_at, 2);
            if (code == "cv")
            {
                _at += 2;
                // A conversion operator's type: template parameters in it refer to the enclosing template's.
                var type = Type();
                return new Text("operator " + type);
            }

            if (code == "li")
            {
                _at += 2;
                return new Text("operator\"\" " + SourceName());
            }

            if (!Operators.TryGetValue(code, out var op)) throw Fail();
            _at += 2;
            // GNU writes "operator new", "operator delete[]" with a space, symbols without one.
            return new Text(char.IsAsciiLetter(op[0]) ? "operator " + op : "operator" + op);
        }

        private Node[] TemplateArgs()
        {
            Expect('I');
            var lastName = _lastName;
            var args = new List<Node>();
            while (!Eat('E')) args.Add(TemplateArg());
            _lastName = lastName;
            return [.. args];
        }

        private Node TemplateArg()
        {
            var c = Peek();
            if (c == 'L') return ExprPrimary();
            if (c == 'J')
            {
                _at++;
                if (++_depth > MaxDepth) throw Fail();
                var items = new List<Node>();
                while (!Eat('E')) items.Add(TemplateArg());
                _depth--;
                return new Pack([.. items]);
            }

            if (c == 'X') return AddressOf();
            return Type();
        }

        /// <summary>
        /// The one expression taken: the address of a function or member, X ad L_Z &lt;encoding&gt; E E. GNU prints a
        /// qualified name bare ("&amp;A::f"), any other function with its parameters in parentheses ("&amp;(f(int))").
        /// </summary>
        private Node AddressOf()
        {
            if (!Eat("XadL_Z")) throw Fail();
            var target = Encoding();
            Expect('E');
            Expect('E');
            return target switch
            {
                Function { Name: Nested name } => new Prefixed("&", name),
                Nested or Text => new Prefixed("&", target),
                _ => new Text("&(" + target + ")"),
            };
        }

        private static readonly Dictionary<char, string> IntegerSuffix = new (char Code, string Text)[]
        {
            ('i', ""), ('j', "u"), ('l', "l"), ('m', "ul"), ('x', "ll"), ('y', "ull")
        }.ToDictionary(e => e.Code, e => e.Text);

        private static readonly Dictionary<char, string> CastTypes = new (char Code, string Text)[]
        {
            ('a', "signed char"), ('c', "char"), ('h', "unsigned char"), ('s', "short"), ('t', "unsigned short"),
            ('w', "wchar_t")
        }.ToDictionary(e => e.Code, e => e.Text);

        /// <summary>A literal's value as written ("n5" → "-5", leading zeros kept, any length).</summary>
        private string LiteralDigits()
        {
            var negative = Eat('n');
            var start = _at;
            while (char.IsAsciiDigit(Peek())) _at++;
            if (_at == start) throw Fail();
            return (negative ? "-" : "") + s[start.._at];
        }

        private Node ExprPrimary()
        {
            Expect('L');
            if (Eat("_Z"))
            {
                var encoding = Encoding();
                Expect('E');
                return encoding;
            }

            if (!Builtins.ContainsKey(Peek()))
            {
                // An enumerator or other integer of a named type: "(LogTag::type)0".
                var named = Type();
                var value = LiteralDigits();
                Expect('E');
                return new Text("(" + named + ")" + value);
            }

            var type = Next();
            string text;
            if (type == 'b' && (Peek() is '0' or '1') && Peek(1) == 'E')
            {
                text = Next() == '1' ? "true" : "false";
            }
            else if (IntegerSuffix.TryGetValue(type, out var suffix))
            {
                text = LiteralDigits() + suffix;
            }
            else if (CastTypes.TryGetValue(type, out var cast))
            {
                text = "(" + cast + ")" + LiteralDigits();
            }
            else throw Fail();
            Expect('E');
            return new Text(text);
        }

        private static readonly Dictionary<char, string> Builtins = new (char Code, string Text)[]
        {
            ('v', "void"), ('w', "wchar_t"), ('b', "bool"), ('c', "char"), ('a', "signed char"),
            ('h', "unsigned char"), ('s', "short"), ('t', "unsigned short"), ('i', "int"), ('j', "unsigned int"),
            ('l', "long"), ('m', "unsigned long"), ('x', "long long"), ('y', "unsigned long long"), ('n', "__int128"),
            ('o', "unsigned __int128"), ('f', "float"), ('d', "double"), ('e', "long double"), ('g', "__float128"),
            ('z', "...")
        }.ToDictionary(e => e.Code, e => e.Text);

        private static readonly Dictionary<char, string> DBuiltins = new (char Code, string Text)[]
        {
            ('d', "decimal64"), ('e', "decimal128"), ('f', "decimal32"), ('h', "half"), ('i', "char32_t"),
            ('s', "char16_t"), ('u', "char8_t"), ('a', "auto"), ('c', "decltype(auto)"), ('n', "decltype(nullptr)")
        }.ToDictionary(e => e.Code, e => e.Text);

        private int _depth;

        private Node Type()
        {
            if (++_depth > MaxDepth) throw Fail();
            try
            {
                return TypeWithin();
            }
            finally
            {
                _depth--;
            }
        }

        private Node TypeWithin()
        {
            var c = Peek();
            if (Builtins.TryGetValue(c, out var builtin))
            {
                _at++;
                return new Text(builtin);
            }

            if (c == 'D' && DBuiltins.TryGetValue(Peek(1), out builtin))
            {
                _at += 2;
                return new Text(builtin);
            }

            Node type;
            switch (c)
            {
                case 'r':
                case 'V':
                case 'K':
                    {
                        var qualifiers = CvQualifiers();
                        // "KK": never written by a compiler (the qualifiers of one type are one run).
                        if (Peek() is 'r' or 'V' or 'K') throw Fail();
                        // A member function's qualifiers (M C KFvvE): one type with its function type, one
                        // substitution.
                        if (Peek() == 'F')
                        {
                            type = FunctionTypeOf(qualifiers);
                            break;
                        }

                        var inner = Type();
                        type = Qualified.Of(inner, qualifiers);
                        break;
                    }
                case 'P':
                    _at++;
                    type = PointerTo(Type());
                    break;
                case 'R':
                case 'O':
                    {
                        _at++;
                        // "RR", "RO": no compiler writes a reference to a reference (one through T_ collapses).
                        if (Peek() is 'R' or 'O') throw Fail();
                        type = Reference(Type(), c == 'R' ? "&" : "&&");
                        break;
                    }
                case 'F':
                    type = FunctionTypeOf("");
                    break;
                case 'A':
                    type = ArrayType();
                    break;
                case 'M':
                    {
                        _at++;
                        var owner = Type();
                        var member = Type();
                        type = new MemberPointer(owner, member);
                        break;
                    }
                case 'T':
                    type = TemplateParam();
                    if (Peek() == 'I')
                    {
                        _substitutions.Add(type);
                        type = new Templated(type, TemplateArgs());
                    }

                    break;
                case 'S':
                    if (Peek(1) == 't')
                    {
                        type = ClassEnumType();
                        break;
                    }

                    type = Substitution();
                    if (Peek() != 'I') return type;
                    type = new Templated(type, TemplateArgs());
                    break;
                case 'D':
                    if (Peek(1) == 'p')
                    {
                        _at += 2;
                        // A pack expansion: the pack's elements (a T_ that names a pack, or a type made of one) in
                        // place; GNU prints an expansion of anything else with "...", which is not read here.
                        type = Type();
                        if (type is not Pack) throw Fail();
                        break;
                    }

                    throw Fail();
                case 'U':
                    throw Fail(); // vendor qualifiers
                default:
                    type = ClassEnumType();
                    break;
            }

            _substitutions.Add(type);
            return type;
        }

        private static Node PointerTo(Node to) =>
            to is Pack pack ? new Pack([.. pack.Items.Select(PointerTo)]) : new Pointer(to, "*");

        /// <summary>A reference to a reference collapses (C++11: &amp; wins).</summary>
        private static Node Reference(Node to, string sigil)
        {
            // Through a pack expansion (Dp O T_): each of the pack's types.
            if (to is Pack pack) return new Pack([.. pack.Items.Select(item => Reference(item, sigil))]);
            if (to is Pointer { Sigil: "&" or "&&" } inner)
                return new Pointer(inner.Pointee, inner.Sigil == "&" || sigil == "&" ? "&" : "&&");
            return new Pointer(to, sigil);
        }

        private FunctionType FunctionTypeOf(string qualifiers)
        {
            Expect('F');
            Eat('Y');
            var returns = Type();
            var parameterTypes = BareFunctionParameters();
            if (Eat('R')) qualifiers += " &";
            else if (Eat('O')) qualifiers += " &&";
            Expect('E');
            return new FunctionType(returns, parameterTypes, qualifiers);
        }

        private ArrayOf ArrayType()
        {
            Expect('A');
            var dimension = "";
            if (char.IsAsciiDigit(Peek())) dimension = Number().ToString(CultureInfo.InvariantCulture);
            else if (Peek() == 'T') dimension = TemplateParam().ToString();
            else if (Peek() != '_') throw Fail();
            Expect('_');
            return new ArrayOf(Type(), dimension);
        }

        private Node ClassEnumType()
        {
            if (Eat("Ts") || Eat("Tu") || Eat("Te")) throw Fail();
            return TypeName();
        }

        /// <summary>A name that is not a function's: const/volatile/ref-qualifiers on it are never mangled.</summary>
        private Node TypeName()
        {
            var name = Name(out _, out var qualifiers);
            return qualifiers.Length == 0 ? name : throw Fail();
        }

        private Node TemplateParam()
        {
            Expect('T');
            var index = Peek() == '_' ? 0 : Number() + 1;
            Expect('_');
            if (_templateArgs is null || index >= _templateArgs.Length) throw Fail();
            return _templateArgs[index];
        }

        private long SequenceId()
        {
            long id = 0;
            var any = false;
            while (char.IsAsciiDigit(Peek()) || char.IsAsciiLetterUpper(Peek()))
            {
                var c = Next();
                id = checked((id * 36) + (char.IsAsciiDigit(c) ? c - '0' : c - 'A' + 10));
                any = true;
            }

            return any ? id + 1 : 0;
        }

        /// <summary>
        /// Ss, Si, So, Sd: c++filt writes them out ("std::basic_ostream&lt;char, std::char_traits&lt;char&gt; &gt;",
        /// its default being DMGL_VERBOSE), perf script short ("std::ostream", its demangler called without options)
        /// but written out before a constructor or destructor, whose name needs it.
        /// </summary>
        private Text Abbreviation(string shortName, string template, string moreArgs)
        {
            _at++;
            _lastName = template;
            var verbose = parameters || Peek() is 'C' or 'D';
            return new Text(verbose
                ? "std::" + template + "<char, std::char_traits<char>" + moreArgs + " >"
                : "std::" + shortName);
        }

        private Node Substitution()
        {
            Expect('S');
            switch (Peek())
            {
                case 'a': _at++; _lastName = "allocator"; return new Text("std::allocator");
                case 'b': _at++; _lastName = "basic_string"; return new Text("std::basic_string");
                case 's': return Abbreviation("string", "basic_string", ", std::allocator<char>");
                case 'i': return Abbreviation("istream", "basic_istream", "");
                case 'o': return Abbreviation("ostream", "basic_ostream", "");
                case 'd': return Abbreviation("iostream", "basic_iostream", "");
            }

            var id = SequenceId();
            Expect('_');
            if (id >= _substitutions.Count) throw Fail();
            // GNU resolves a T_ when it prints it, in the template it is printed in: a substitution made inside a
            // local template function (a lambda's scope in a template argument) and used outside it would print
            // that function's arguments here, but the outer template's there. Left mangled rather than guessed.
            foreach (var (from, to, scope) in _localScopes)
            {
                if (id >= from && id < to && !ReferenceEquals(scope, _templateArgs)) throw Fail();
            }

            return _substitutions[(int)id];
        }
    }
}
