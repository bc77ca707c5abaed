#!/usr/bin/env python3
"""The repository's written rules that a machine can check (CONTRIBUTING.md, "Code standards"; docs/testing.md,
"Rule checks"). Prints one line per violation, "path:line: rule: what", and exits 1 when there is any.

    python3 tools/check-rules.py [lines] [imports] [links] [references] [headings]    (default: all of them)
"""
import os
import re
import subprocess
import sys
import unicodedata

WIDTH = 120

# Product code and scripts, and the tests: every line a person reads as code keeps to the limit. Markdown is
# exempt (tables cannot wrap; .editorconfig says so), as are data files (JSON, the WPA profile WPA writes).
LINE_ROOTS = ('src/', 'analyzers/', 'native-workloads/', 'tools/', 'tests/', '.ci/')
LINE_SUFFIXES = ('.cs', '.c', '.h', '.sh', '.py', '.cmake', 'CMakeLists.txt', '.csproj', '.props', '.targets')
LINE_FILES = ('.ci/run', 'Directory.Build.props', 'Directory.Packages.props')

# Markdown whose links and anchors must resolve.
MARKDOWN_ROOTS = ('README.md', 'CONTRIBUTING.md', 'docs/', 'native-workloads/', 'sample-traces/')

# Text that may not cite issue numbers or files outside the repository.
REFERENCE_ROOTS = ('src/', 'analyzers/', 'native-workloads/', 'tools/', 'tests/', 'docs/', '.ci/', '.github/',
                   'README.md', 'CONTRIBUTING.md', 'Directory.Build.props', 'Directory.Packages.props', '.editorconfig')
REFERENCE_SUFFIXES = ('.cs', '.c', '.h', '.sh', '.py', '.cmake', '.txt', '.md', '.csproj', '.props', '.targets',
                      '.yml', '.editorconfig', '.runsettings', '.pubxml', '.ci/run')
# The one helper that names the external traces' folder (CONTRIBUTING.md).
EXTERNAL_TRACES_HELPER = 'tests/TraceLab.TestSupport/ExternalTraces.cs'
# The checker names the patterns it rejects.
SELF = 'tools/check-rules.py'

ISSUE_PATTERNS = [
    (re.compile(r'\bissues?\s+#?\d+', re.IGNORECASE), 'an issue number'),
    (re.compile(r'\b(?:see|fixes|fixed|closes|closed|resolves|resolved|per|from|in)\s+#\d+\b', re.IGNORECASE),
     'an issue number'),
    (re.compile(r'\bGH-\d+\b'), 'an issue number'),
]
OUTSIDE_PATTERNS = [
    (re.compile(r'\.\./shared\b|\bshared/(?:external-traces|reference)\b'), 'a file outside the repository'),
    (re.compile(r'\bdesign card\b', re.IGNORECASE), 'a document outside the repository ("the design card")'),
    (re.compile(r'(?<![\w.])/(?:work|root|home/[a-z][\w-]*)/[\w.-]'), 'an absolute path of one machine'),
]
# "metrics.md 8.1", "metrics.md 4a", "metrics.md, 20", "metrics.md §6": section numbers go stale when sections
# move; cite anchors.
SECTION_CITATION = re.compile(r'\b[\w-]+\.md,?\s+(?:§\s*)?\d+[a-z]?(?:\.\d+[a-z]?)*(?=[)\]:;,]|\s*$|\.\s|\.$)')
NUMBERED_HEADING = re.compile(r'^#{1,6}\s+\d+(?:\.\d+)*\.?\s')


def git_files():
    out = subprocess.run(['git', 'ls-files', '-z', '--cached', '--others', '--exclude-standard'],
                         capture_output=True, text=True, check=True).stdout
    return sorted(f for f in out.split('\0') if f and os.path.isfile(f))


def under(path, roots):
    return any(path == r or (r.endswith('/') and path.startswith(r)) for r in roots)


def read(path):
    try:
        with open(path, encoding='utf-8') as fh:
            return fh.read()
    except (UnicodeDecodeError, OSError):
        return None


def report(path, line, rule, what):
    print(f'{path}:{line}: {rule}: {what}')


# ------------------------------------------------------------------------------------------------ line length
def check_lines(files):
    n = 0
    for f in files:
        if not (under(f, LINE_ROOTS) and f.endswith(LINE_SUFFIXES)) and f not in LINE_FILES:
            continue
        text = read(f)
        if text is None:
            continue
        for i, line in enumerate(text.split('\n'), 1):
            # Characters, not bytes: 'µ' and '—' are one column each.
            if len(line) > WIDTH:
                report(f, i, 'line-length', f'{len(line)} columns (limit {WIDTH})')
                n += 1
    return n


# ------------------------------------------------------------------------------------------------ import order
def check_imports(files):
    """`using` directives sorted with System first (.editorconfig: dotnet_sort_system_directives_first), as
    `dotnet format` orders them; the folder-mode whitespace check does not look at this."""
    n = 0
    for f in files:
        if not f.endswith('.cs'):
            continue
        text = read(f)
        if text is None:
            continue
        names = []
        first_line = None
        for i, line in enumerate(text.split('\n'), 1):
            m = re.match(r'^using\s+([\w.]+)\s*;\s*$', line)
            if m:
                names.append(m.group(1))
                first_line = first_line or i
            elif line.strip() and not line.startswith('//') and not line.startswith('#') \
                    and not line.startswith('global using') and not line.startswith('using '):
                break
        key = [(0 if n_ == 'System' or n_.startswith('System.') else 1, n_.lower()) for n_ in names]
        if key != sorted(key):
            report(f, first_line, 'import-order', 'using directives not sorted (System first, then by name)')
            n += 1
    return n


# ------------------------------------------------------------------------------------------------ links
def strip_code(text):
    """Markdown without fenced code blocks and inline code spans (links there are examples, not links)."""
    out = []
    fence = None
    for line in text.split('\n'):
        m = re.match(r'^\s*(```+|~~~+)', line)
        if m:
            if fence is None:
                fence = m.group(1)[:3]
            elif line.strip().startswith(fence):
                fence = None
            out.append('')
            continue
        if fence is not None:
            out.append('')
            continue
        out.append(re.sub(r'(`+)(.+?)\1', lambda mm: ' ' * len(mm.group(0)), line))
    return out


def github_slug(heading):
    """GitHub's heading anchor: inline markup removed, lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r'!\[([^\]]*)\]\([^)]*\)', r'\1', heading)
    text = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', text)
    text = re.sub(r'<[^>]+>', '', text)
    text = text.replace('`', '').replace('*', '')
    text = text.strip().lower()
    kept = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch in '-_ ' or cat[0] in 'LN' or cat == 'Mn':
            kept.append(ch)
    return ''.join(kept).replace(' ', '-')


def anchors_of(path, cache={}):
    if path in cache:
        return cache[path]
    text = read(path) or ''
    found = set()
    counts = {}
    fence = None
    for line in text.split('\n'):
        m = re.match(r'^\s*(```+|~~~+)', line)
        if m:
            fence = m.group(1)[:3] if fence is None else (None if line.strip().startswith(fence) else fence)
            continue
        if fence is not None:
            continue
        h = re.match(r'^#{1,6}\s+(.*?)\s*#*\s*$', line)
        if h:
            slug = github_slug(h.group(1))
            k = counts.get(slug, 0)
            found.add(slug if k == 0 else f'{slug}-{k}')
            counts[slug] = k + 1
        for a in re.finditer(r'<a\s+(?:id|name)\s*=\s*"([^"]+)"', line):
            found.add(a.group(1))
    cache[path] = found
    return found


LINK = re.compile(r'(?<!\!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
IMAGE = re.compile(r'!\[[^\]]*\]\(\s*<?([^)\s>]+)>?\s*\)')
REF_DEF = re.compile(r'^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$')
HTML_REF = re.compile(r'<(?:a|img)\s[^>]*(?:href|src)\s*=\s*"([^"]+)"')


def check_links(files):
    n = 0
    repo = os.path.realpath('.')
    for f in files:
        if not f.endswith('.md') or not under(f, MARKDOWN_ROOTS):
            continue
        text = read(f)
        if text is None:
            continue
        for i, line in enumerate(strip_code(text), 1):
            targets = [m.group(1) for m in LINK.finditer(line)] + [m.group(1) for m in IMAGE.finditer(line)]
            targets += [m.group(1) for m in HTML_REF.finditer(line)]
            m = REF_DEF.match(line)
            if m:
                targets.append(m.group(1))
            for t in targets:
                if re.match(r'^[a-z][a-z0-9+.-]*:', t, re.IGNORECASE):
                    continue  # http:, https:, mailto:: not checked offline
                path, _, anchor = t.partition('#')
                if path:
                    target = os.path.normpath(os.path.join(os.path.dirname(f), path))
                    real = os.path.realpath(target)
                    if real != repo and not real.startswith(repo + os.sep):
                        report(f, i, 'link', f'{t} leaves the repository')
                        n += 1
                        continue
                    if not os.path.exists(target):
                        report(f, i, 'link', f'{t}: no such file')
                        n += 1
                        continue
                else:
                    target = f
                if anchor and target.endswith('.md') and anchor not in anchors_of(target):
                    report(f, i, 'anchor', f'{t}: no heading or <a id> "{anchor}" in {target}')
                    n += 1
    return n


# ------------------------------------------------------------------------------------------------ references
def check_references(files):
    n = 0
    for f in files:
        if f == SELF or not under(f, REFERENCE_ROOTS):
            continue
        if not (f.endswith(REFERENCE_SUFFIXES) or os.path.basename(f) in ('run', '.editorconfig')):
            continue
        text = read(f)
        if text is None:
            continue
        for i, line in enumerate(text.split('\n'), 1):
            for pattern, what in ISSUE_PATTERNS + OUTSIDE_PATTERNS:
                if f == EXTERNAL_TRACES_HELPER and 'outside' in what:
                    continue
                m = pattern.search(line)
                if m:
                    report(f, i, 'reference', f'{what}: "{m.group(0)}"')
                    n += 1
            m = SECTION_CITATION.search(line)
            if m:
                report(f, i, 'section-number', f'"{m.group(0)}": cite the section\'s anchor (file.md#anchor)')
                n += 1
    return n


# ------------------------------------------------------------------------------------------------ headings
def check_headings(files):
    """No numbered headings in the written docs: numbers go stale, and people cite them instead of anchors.
    The sample traces' report.md files are reports TraceLab wrote (findings are numbered by rank), not docs."""
    n = 0
    for f in files:
        if not f.endswith('.md') or f.startswith('sample-traces/'):
            continue
        text = read(f)
        if text is None:
            continue
        for i, line in enumerate(strip_code(text), 1):
            if NUMBERED_HEADING.match(line):
                report(f, i, 'numbered-heading', line.strip()[:60])
                n += 1
    return n


CHECKS = {
    'lines': check_lines,
    'imports': check_imports,
    'links': check_links,
    'references': check_references,
    'headings': check_headings,
}


def main(argv):
    root = subprocess.run(['git', 'rev-parse', '--show-toplevel'], capture_output=True, text=True,
                          check=True).stdout.strip()
    os.chdir(root)
    names = argv or list(CHECKS)
    unknown = [a for a in names if a not in CHECKS]
    if unknown:
        print(f'check-rules: unknown check {unknown[0]} (known: {", ".join(CHECKS)})', file=sys.stderr)
        return 2
    files = git_files()
    total = sum(CHECKS[name](files) for name in names)
    return 1 if total else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
