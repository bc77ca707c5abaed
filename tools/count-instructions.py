#!/usr/bin/env python3
"""Instructions executed per function, from a callgrind profile of a Native AOT tracelab
(docs/performance.md#instruction-counts).

A count that does not move with the host's noise: on these VMs wall and CPU time of the same run spread ±20 %, so
changes of a few percent cannot be seen in them; the instructions a run executes are the same from run to run
(within ~0.01 %). They are not time (a cache miss costs no instruction), so they judge changes to code paths that
do not wait on memory — the reader, the decoders, the dispatch — and say nothing of per-thread state's misses.

    tools/count-instructions.sh EXE [EXE2] TRACE    (runs callgrind and calls this)
    tools/count-instructions.py PROFILE EXE [N]                 the N functions that execute most, self counts
    tools/count-instructions.py PROFILE EXE N PROFILE2 EXE2     the N functions whose counts changed most, 1 -> 2

callgrind must have been run with --dump-instr=yes: each cost line then starts with an instruction address, which is
looked up in the executable's symbol table (nm; publish with -p:StripSymbols=false), since callgrind names no function
in a Native AOT executable's managed code.
"""
import bisect
import collections
import importlib.util
import os
import sys


def symbols(exe):
    """The executable's functions as (address, name), sorted: profile-aot.py's table."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'profile-aot.py')
    spec = importlib.util.spec_from_file_location('profile_aot', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.symbols(exe)


def self_counts(profile, exe):
    """Self instructions per function name, and the total. Lines after a calls= line are the call's inclusive cost
    and are skipped (they would count the callee twice)."""
    table = symbols(exe)
    starts = [a for a, _ in table]
    end = table[-1][0] if table else 0
    names = {}
    counts = collections.Counter()
    total = 0
    address = 0
    function = '?'
    call_cost_next = False
    with open(profile, encoding='utf-8', errors='replace') as lines:
        for line in lines:
            if line.startswith(('fn=', 'cfn=')):
                ident, _, name = line.rstrip('\n').partition('=')[2].partition(' ')
                if name:
                    names[ident] = name
                if line.startswith('fn='):
                    function = names.get(ident, ident)
                continue
            if line.startswith('calls='):
                call_cost_next = True
                continue
            if not line or line[0] not in '0123456789+-*':
                continue
            fields = line.split()
            position = fields[0]
            if position.startswith('0x'):
                address = int(position, 16)
            elif position[0] == '+':
                address += int(position[1:])
            elif position[0] == '-':
                address -= int(position[1:])
            if call_cost_next:
                call_cost_next = False
                continue
            # positions: instr line -> address, line, then the Ir count
            if len(fields) < 3:
                continue
            ir = int(fields[2])
            total += ir
            i = bisect.bisect_right(starts, address) - 1
            name = table[i][1] if 0 <= i and address <= end + (1 << 20) else function
            counts[name] += ir
    return counts, total


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    top = int(argv[3]) if len(argv) > 3 else 40
    counts, total = self_counts(argv[1], argv[2])
    if len(argv) < 6:
        print(f'{total:>15,}  instructions in all')
        for name, ir in counts.most_common(top):
            print(f'{ir:>15,}  {100.0 * ir / total:5.1f} %  {name[:140]}')
        return 0
    counts2, total2 = self_counts(argv[4], argv[5])
    print(f'{total:>15,} -> {total2:,} instructions in all ({100.0 * (total2 - total) / total:+.2f} %)')
    changes = collections.Counter()
    for name in set(counts) | set(counts2):
        changes[name] = counts2[name] - counts[name]
    for name, delta in sorted(changes.items(), key=lambda kv: -abs(kv[1]))[:top]:
        print(f'{counts[name]:>15,} -> {counts2[name]:>15,}  {delta:>+14,}  {name[:120]}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
