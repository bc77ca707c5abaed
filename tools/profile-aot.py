#!/usr/bin/env python3
"""Names the functions of a Native AOT tracelab in a perf profile (docs/performance.md#profile-aot). perf cannot name
code in the executable's __managedcode section; publish with -p:StripSymbols=false and this looks each address up in
the executable's symbol table (nm) instead.

    perf record -F 10000 -e cpu-clock -o prof.data -- EXE bench TRACE --analysis-threads 0 --repeat 5
    perf script -F ip,sym -i prof.data | tools/profile-aot.py EXE flat [N]
    perf record -g ... ; perf script -F ip,sym -i prof.data | tools/profile-aot.py EXE inclusive [N] [WITHIN]
    perf script -F ip,sym -i prof.data | tools/profile-aot.py EXE callers FUNCTION [DEPTH]

flat: each function's share of the samples (self time); inclusive: of the samples with a call chain (perf record
-g), the share each function is on, counting only samples that pass through a function named like WITHIN; callers:
the DEPTH frames above FUNCTION, grouped. Addresses in call chains are file offsets: the executable's first load
segment's address is added to them.
"""
import bisect
import collections
import subprocess
import sys


def symbols(exe):
    table = []
    listing = subprocess.run(['nm', '--defined-only', exe], capture_output=True, text=True, check=True).stdout
    for line in listing.splitlines():
        parts = line.split(' ', 2)
        if len(parts) == 3 and parts[1] in 'tTwW':
            table.append((int(parts[0], 16), parts[2]))
    table.sort()
    return table


def load_base(exe):
    headers = subprocess.run(['readelf', '-lW', exe], capture_output=True, text=True, check=True).stdout
    for line in headers.splitlines():
        fields = line.split()
        if fields and fields[0] == 'LOAD':
            return int(fields[2], 16)
    return 0


class Namer:
    def __init__(self, exe):
        self.table = symbols(exe)
        self.starts = [a for a, _ in self.table]
        self.base = load_base(exe)

    def name(self, ip, sym, offset):
        if sym and sym != '[unknown]' and not sym.startswith('__managedcode') and '+0x' not in sym:
            return sym
        i = bisect.bisect_right(self.starts, ip + offset) - 1
        return self.table[i][1] if i >= 0 else hex(ip)


def samples(lines):
    """Each sample's frames as (ip, symbol), innermost first, and whether they came with a call chain: with one (perf
    record -g) perf script ends each sample with an empty line and prints file offsets; without, a sample is a line
    and its address is the executable's own."""
    lines = [line.strip() for line in lines]
    chains = any(not line for line in lines)
    frames = []
    for line in lines + ['']:
        parts = line.split(None, 1)
        if parts:
            try:
                frames.append((int(parts[0], 16), parts[1] if len(parts) > 1 else ''))
            except ValueError:
                pass
        if frames and (not chains or not line):
            yield frames, chains
            frames = []


def main(argv):
    if len(argv) < 3 or argv[2] not in ('flat', 'inclusive', 'callers'):
        sys.exit(__doc__)
    namer, mode, rest = Namer(argv[1]), argv[2], argv[3:]
    within = rest[1] if mode == 'inclusive' and len(rest) > 1 else None
    depth = int(rest[1]) if mode == 'callers' and len(rest) > 1 else 2
    counts, total = collections.Counter(), 0
    for frames, chains in samples(sys.stdin.readlines()):
        offset = namer.base if chains else 0
        names = [namer.name(ip, sym, offset) for ip, sym in frames]
        if mode == 'flat':
            total += 1
            counts[names[0]] += 1
        elif mode == 'inclusive':
            if within and not any(within in n for n in names):
                continue
            total += 1
            counts.update(set(names))
        else:
            at = next((i for i, n in enumerate(names) if rest[0] in n), None)
            if at is None:
                continue
            total += 1
            counts[' <- '.join(names[at + 1:at + 1 + depth])] += 1
    top = int(rest[0]) if mode != 'callers' and rest else 40
    for name, count in counts.most_common(top):
        print(f'{100 * count / max(total, 1):6.2f}% {count:7d}  {name}')
    print(f'{total} samples')


if __name__ == '__main__':
    main(sys.argv)
