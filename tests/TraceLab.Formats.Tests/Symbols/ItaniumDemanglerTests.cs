using System.Diagnostics;
using TraceLab.Core;
using TraceLab.Formats.Symbols;

namespace TraceLab.Formats.Tests.Symbols;

/// <summary>
/// C++ names come out as GNU c++filt prints them, or stay mangled: checked by hand on each construct, then against
/// c++filt itself on every C++ symbol of real libraries (libstdc++ always; OpenJDK's libjvm.so and MariaDB's mariadbd
/// where installed) and on names damaged at random, which c++filt either prints or leaves alone.
/// </summary>
public sealed class ItaniumDemanglerTests
{
    [Theory]
    // Each expectation as c++filt (binutils 2.40) prints the symbol.
    [InlineData("_ZN13ObjectMonitor6EnterIEP10JavaThread", "ObjectMonitor::EnterI(JavaThread*)")]
    [InlineData("_Z1fILi5EEvv", "void f<5>()")]
    [InlineData("_Z1fILj5EEvv", "void f<5u>()")]
    [InlineData("_Z1fILm5EEvv", "void f<5ul>()")]
    [InlineData("_Z1fILb1EEvv", "void f<true>()")]
    [InlineData("_Z1fILc97EEvv", "void f<(char)97>()")]
    [InlineData("_Z1fILin5EEvv", "void f<-5>()")]
    [InlineData("_ZN1AIiE1fIcEEvT_", "void A<int>::f<char>(char)")]
    [InlineData("_ZN1A1fEPFviE", "A::f(void (*)(int))")]
    [InlineData("_ZN1A1fEPA3_i", "A::f(int (*) [3])")]
    [InlineData("_Z1fRA3_i", "f(int (&) [3])")]
    [InlineData("_ZN1A1fEM1BFviE", "A::f(void (B::*)(int))")]
    [InlineData("_ZN1A1fEM1Bi", "A::f(int B::*)")]
    [InlineData("_ZNK1A1fEv", "A::f() const")]
    [InlineData("_ZN1A1fERKS_", "A::f(A const&)")]
    [InlineData("_ZNSt6vectorIiSaIiEE9push_backERKi", "std::vector<int, std::allocator<int> >::push_back(int const&)")]
    [InlineData("_ZSt4moveIRiEONSt16remove_referenceIT_E4typeEOS2_",
        "std::remove_reference<int&>::type&& std::move<int&>(int&)")]
    [InlineData("_ZZ1fvE1x", "f()::x")]
    [InlineData("_ZZ1fvEs", "f()::string literal")]
    [InlineData("_ZGVZ1fvE1x", "guard variable for f()::x")]
    [InlineData("_ZTV1A", "vtable for A")]
    [InlineData("_ZTI1A", "typeinfo for A")]
    [InlineData("_ZTS1A", "typeinfo name for A")]
    [InlineData("_ZThn8_N1A1fEv", "non-virtual thunk to A::f()")]
    [InlineData("_ZTv0_n24_N1A1fEv", "virtual thunk to A::f()")]
    [InlineData("_ZTC1A0_1B", "construction vtable for B-in-A")]
    [InlineData("_Z1fv.isra.0.cold", "f() [clone .isra.0] [clone .cold]")]
    [InlineData("_ZN1AC2Ev", "A::A()")]
    [InlineData("_ZN1AD0Ev", "A::~A()")]
    [InlineData("_ZZ1fvENKUlvE_clEv", "f()::{lambda()#1}::operator()() const")]
    [InlineData("_ZN1A1fB5cxx11Ev", "A::f[abi:cxx11]()")]
    [InlineData("_Z1fPKc", "f(char const*)")]
    [InlineData("_Z1fDn", "f(decltype(nullptr))")]
    [InlineData("_Z1fIJidEEvDpT_", "void f<int, double>(int, double)")]
    [InlineData("_Z1fPFPFivEvE", "f(int (*(*)())())")]
    [InlineData("_ZN1AcvbEv", "A::operator bool()")]
    [InlineData("_ZNKSt9type_infoeqERKS_", "std::type_info::operator==(std::type_info const&) const")]
    [InlineData("_ZN5wsreplsERSoNS_5seqnoE",
        "wsrep::operator<<(std::basic_ostream<char, std::char_traits<char> >&, wsrep::seqno)")]
    [InlineData("_ZNSaIcEC1Ev", "std::allocator<char>::allocator()")]
    [InlineData("_ZN14JfrVMOperationI18JfrRecorderServiceXadL_ZNS0_15safepoint_clearEvEEE4doitEv",
        "JfrVMOperation<JfrRecorderService, &JfrRecorderService::safepoint_clear>::doit()")]
    [InlineData("_ZNSt8ios_base7failureB5cxx11C1EPKcRKSt10error_code",
        "std::ios_base::failure[abi:cxx11]::failure(char const*, std::error_code const&)")]
    public void Each_construct_prints_as_cxxfilt_prints_it(string mangled, string expected) =>
        Assert.Equal(expected, ItaniumDemangler.Demangle(mangled));

    [Theory]
    // Without parameters, as perf script prints them: a function is its name alone.
    [InlineData("_ZN13ObjectMonitor6EnterIEP10JavaThread", "ObjectMonitor::EnterI")]
    [InlineData("_ZNK1A1fEv", "A::f")]
    [InlineData("_ZN1AIiE1fIcEEvT_", "A<int>::f<char>")]
    [InlineData("_Z1fv.isra.0.cold", "f")]
    [InlineData("_ZZN1A1fEiE1x", "A::f(int)::x")] // the scope of a local name keeps its parameters
    [InlineData("_ZThn8_N1A1fEv", "non-virtual thunk to A::f()")]
    [InlineData("_Z4holdISsEvRSt6vectorIT_SaIS1_EE", "hold<std::string>")] // perf's short form, not c++filt -p's
    [InlineData("_ZNSsC1Ev", "std::basic_string<char, std::char_traits<char>, std::allocator<char> >::basic_string")]
    [InlineData("_ZNSt6thread11_State_implINS_8_InvokerISt5tupleIJZ4mainEUlvE_EEEEE6_M_runEv",
        "std::thread::_State_impl<std::thread::_Invoker<std::tuple<main::{lambda()#1}> > >::_M_run")]
    public void Without_parameters_a_function_is_named_as_perf_script_names_it(string mangled, string expected) =>
        Assert.Equal(expected, ItaniumDemangler.Demangle(mangled, parameters: false));

    [Theory]
    [InlineData("main")] // not mangled
    [InlineData("_ZERO")] // starts like one
    [InlineData("_Z1fIiEDTcl1gfp_EET_")] // decltype expressions: not read, left mangled
    [InlineData("_ZL1x.lto_priv.0")] // a variable with a clone suffix: c++filt leaves it too
    [InlineData("_ZN1A")] // cut short
    [InlineData("_ZN3std2rt10lang_start17h0123456789abcdefE")] // Rust's legacy mangling: its escapes are not C++
    [InlineData("_ZN4core3ptr13drop_in_place$LT$u8$GT$17h0123456789abcdefE")]
    public void What_it_does_not_read_stays_mangled(string symbol) => Assert.Null(ItaniumDemangler.Demangle(symbol));

    [Fact]
    public void Forged_names_neither_throw_nor_exhaust_the_stack()
    {
        string[] forged =
        [
            "_Z1f" + new string('P', 100_000) + "i",
            "_Z1fI" + new string('J', 100_000),
            "_Z" + string.Concat(Enumerable.Repeat("Z1fvE", 50_000)) + "1x",
            "_ZN" + string.Concat(Enumerable.Repeat("1a", 50_000)) + "E", // a name 50,000 components deep
            "_Z1f" + string.Concat(Enumerable.Repeat("B1t", 50_000)) + "v", // 50,000 ABI tags
            "_Z1fIiEvPS_PS0_PS1_PS2_PS3_PS4_PS5_PS6_PS7_PS8_PS9_PSA_PSB_PSC_PSD_PSE_PSF_",
            "_Z999999999999999999999999x", "_ZSt", "_ZNS9999999999_E", "_ZT", "_ZGR1x",
        ];
        foreach (var s in forged)
        {
            var demangled = ItaniumDemangler.Demangle(s);
            Assert.True(demangled is null || demangled.Length <= 20_000, s[..Math.Min(40, s.Length)]);
        }
    }

    [CxxFiltFact]
    public void Every_cxx_symbol_of_real_libraries_prints_as_cxxfilt_prints_it_or_stays_mangled()
    {
        var summary = new List<string>();
        foreach (var library in Libraries().Where(File.Exists))
        {
            var elf = ElfSymbols.TryLoad(library, out var error);
            Assert.True(elf is not null, error);
            var names = elf.Functions.Concat(elf.Objects).Select(s => s.Name)
                .Where(n => n.StartsWith("_Z", StringComparison.Ordinal)).Distinct().ToArray();
            Assert.NotEmpty(names);
            var expected = CxxFilt(names);
            var wrong = new List<string>();
            var kept = 0;
            for (var i = 0; i < names.Length; i++)
            {
                var ours = ItaniumDemangler.Demangle(names[i]);
                Assert.Equal(ours is null, ItaniumDemangler.Demangle(names[i], parameters: false) is null);
                if (ours is null) kept++;
                else if (ours != expected[i]) wrong.Add($"{names[i]}\n  ours    {ours}\n  c++filt {expected[i]}");
            }

            Assert.True(wrong.Count == 0, $"{library}: {wrong.Count} differ from c++filt:\n" +
                string.Join("\n", wrong.Take(5)));
            // What c++filt prints and this leaves mangled: expressions in template arguments, decltype, a lambda
            // scope's template parameters used outside it (nm: libjvm.so 1 of 53,639 on Debian 12's OpenJDK 17, the
            // symbol _ZERO, no C++ name; mariadbd 15 of 25,952).
            Assert.True(kept <= names.Length / 100, $"{library}: {kept} of {names.Length} left mangled");
            summary.Add($"{Path.GetFileName(library)} {names.Length - kept}/{names.Length}");
        }

        Assert.Contains(summary, s => s.StartsWith("libstdc++", StringComparison.Ordinal));
    }

    [CxxFiltFact]
    public void Damaged_names_print_as_cxxfilt_prints_them_or_stay_mangled()
    {
        var elf = ElfSymbols.TryLoad(Libraries()[0], out var error);
        Assert.True(elf is not null, error);
        var names = elf.Functions.Select(s => s.Name).Where(n => n.StartsWith("_Z", StringComparison.Ordinal))
            .ToArray();
        const string alphabet = "_ZNESIJTLKPRVOAFMXDvicdfjlmxy0123456789abcdeBCUlts";
        var rng = new Random(20261129);
        var damaged = new List<string>();
        while (damaged.Count < 20_000)
        {
            var chars = names[rng.Next(names.Length)].ToList();
            for (var edit = rng.Next(1, 4); edit > 0 && chars.Count > 2; edit--)
            {
                var at = rng.Next(2, chars.Count);
                switch (rng.Next(3))
                {
                    case 0: chars[at] = alphabet[rng.Next(alphabet.Length)]; break;
                    case 1: chars.RemoveAt(at); break;
                    default: chars.Insert(at, alphabet[rng.Next(alphabet.Length)]); break;
                }
            }

            damaged.Add(new string([.. chars]));
        }

        var expected = CxxFilt([.. damaged]);
        var printed = 0;
        var wrong = new List<string>();
        for (var i = 0; i < damaged.Count; i++)
        {
            if (ItaniumDemangler.Demangle(damaged[i]) is not { } ours) continue;
            printed++;
            if (ours != expected[i]) wrong.Add($"{damaged[i]}\n  ours    {ours}\n  c++filt {expected[i]}");
        }

        Assert.True(wrong.Count == 0, string.Join("\n", wrong.Take(5)));
        // Most damaged names are still names (a changed letter in an identifier): the check compared many.
        Assert.True(printed > 2_000, $"only {printed} of {damaged.Count} printed");
    }

    [CxxFiltFact]
    public void A_stack_frame_in_a_cxx_library_is_named_demangled_unless_asked_not_to()
    {
        var library = Libraries()[0];
        var elf = ElfSymbols.TryLoad(library, out var error);
        Assert.True(elf is not null, error);
        var function = elf.Functions.First(f => f.Name.StartsWith("_ZNSt", StringComparison.Ordinal) && f.Size > 8
            && ItaniumDemangler.Demangle(f.Name) is not null);
        var load = elf.Loads.First(l => function.Start >= l.Address && function.Start < l.Address + l.FileSize);
        const ulong mappedAt = 0x7f0000000000;
        var fileOffset = function.Start - load.Address + load.Offset;
        var maps = new ProcessMaps();
        maps.Add(1, new ModuleMapping(mappedAt, 0x10000000, 0, library, null, true, 0));
        var address = mappedAt + fileOffset + 4;

        var named = new StackSymbolizer(maps, options: new SymbolOptions { DebugDirectories = [] })
            .Frame(1, address, 0, kernel: false);
        var asLinked = new StackSymbolizer(maps, options: new SymbolOptions { DebugDirectories = [], Demangle = false })
            .Frame(1, address, 0, kernel: false);

        Assert.Equal(function.Name, asLinked.Symbol);
        // As perf script names it: without parameters.
        Assert.Equal(ItaniumDemangler.Demangle(function.Name, parameters: false), named.Symbol);
        Assert.DoesNotContain("(", named.Symbol!.Replace("(anonymous namespace)", "", StringComparison.Ordinal),
            StringComparison.Ordinal);
        Assert.Equal(4UL, named.Offset);
    }

    /// <summary>
    /// Without parameters, every function of the real libraries is named as perf names it: each name is one perf's
    /// own demangler gives (<c>perf probe -x LIBRARY --funcs</c>, which lists the functions as perf script names
    /// them; it also lists data symbols and PLT entries, so the check is of inclusion). Where perf's and c++filt's
    /// differ (std::string, std::ostream … written out by c++filt, short by perf) this follows perf.
    /// </summary>
    [PerfProbeFact]
    public void Without_parameters_every_function_of_real_libraries_is_named_as_perf_names_it()
    {
        foreach (var library in Libraries().Where(File.Exists))
        {
            var elf = ElfSymbols.TryLoad(library, out var error);
            Assert.True(elf is not null, error);
            var perf = ProcessOutput.Lines("perf", "probe", "-x", library, "--funcs", "--filter", "*").ToHashSet();
            Assert.True(perf.Count > 1000, $"perf probe listed {perf.Count} functions of {library}");
            var ours = elf.Functions.Select(f => f.Name).Where(n => n.StartsWith("_Z", StringComparison.Ordinal))
                .Select(n => ItaniumDemangler.Demangle(n, parameters: false)).OfType<string>().ToHashSet();
            Assert.True(ours.Count > 1000, $"{ours.Count} functions of {library}");
            var missing = ours.Where(n => !perf.Contains(n)).ToList();
            Assert.True(missing.Count == 0, $"{library}: {missing.Count} of {ours.Count} names perf does not give, " +
                $"e.g. {missing.FirstOrDefault()}");
        }
    }

    /// <summary>libstdc++ first (every Linux .NET machine has it), then the servers' where installed.</summary>
    private static string[] Libraries() =>
    [
        "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
        "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so",
        "/usr/sbin/mariadbd",
    ];

    /// <summary>c++filt's output for each name, one line each (it reads names from stdin).</summary>
    private static string[] CxxFilt(string[] names, params string[] options)
    {
        var start = new ProcessStartInfo("c++filt", options)
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            UseShellExecute = false,
        };
        using var process = Process.Start(start) ?? throw new InvalidOperationException("c++filt did not start");
        var reading = process.StandardOutput.ReadToEndAsync();
        foreach (var name in names) process.StandardInput.WriteLine(name);
        process.StandardInput.Close();
        var lines = reading.GetAwaiter().GetResult().Split('\n');
        process.WaitForExit();
        Assert.True(lines.Length >= names.Length, $"c++filt printed {lines.Length} lines for {names.Length} names");
        return lines[..names.Length];
    }
}

/// <summary>As <see cref="CxxFiltFactAttribute"/>, and perf (whose demangler is the reference) is installed.</summary>
public sealed class PerfProbeFactAttribute : FactAttribute
{
    public PerfProbeFactAttribute() => Skip = CxxFiltFactAttribute.Missing()
        ?? (TestEnvironment.OnPath("perf") ? null : "perf not installed (apt-get install -y linux-perf)");
}

/// <summary>Skipped, with the reason, without c++filt (binutils) or libstdc++ on x86-64 Linux.</summary>
public sealed class CxxFiltFactAttribute : FactAttribute
{
    public CxxFiltFactAttribute() => Skip = Missing();

    /// <summary>Why the c++filt comparisons cannot run here, found at discovery; null when they can.</summary>
    internal static string? Missing() =>
        !OperatingSystem.IsLinux() || !File.Exists("/usr/lib/x86_64-linux-gnu/libstdc++.so.6")
            ? "needs x86-64 Linux with /usr/lib/x86_64-linux-gnu/libstdc++.so.6 (libstdc++6)"
            : TestEnvironment.OnPath("c++filt") ? null : "c++filt not installed (apt-get install -y binutils)";
}
