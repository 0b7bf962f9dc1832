#!/usr/bin/env python3
"""Checks the layering of the loader's crates (make lint-rust).

Usage: python3 hack/check-rust-layering.py [--top N] CRATES_DIR

For every crate under CRATES_DIR (a directory with Cargo.toml and src/):

- No cycle between the crate's modules. A module is a file src/x.rs or the folder src/x/
  (src/x/mod.rs and everything under it: nested files belong to their top-level module). An
  edge x -> y is any `use crate::y...`, `crate::y::` path or `super::` path that reaches y from
  x, in code (comments and doc links are not imports). The crate root (lib.rs, main.rs) only
  declares modules, so it is not part of the graph.
- No function longer than MAX_FN_LINES lines, from its `fn` line to its closing brace at the same
  indentation (the code is rustfmt'd), outside `#[cfg(test)]` modules, tests/ directories and
  the test oracles listed in TEST_ORACLES.

Prints every finding and exits 1 when there is one. --top N also prints the N longest functions
and files (test code included in files, not in functions).
"""
import argparse
import os
import re
import sys

MAX_FN_LINES = 120

# Modules that exist only to check the real code against a simpler model (compiled for tests and
# fuzz targets, never into the loader): clarity of the model beats splitting its functions.
# (crate directory, top-level module) -> why it is exempt from the function length rule.
TEST_ORACLES = {
    ('rdf-input', 'terse_check'): 'the Turtle/TriG model the fuzz targets and tests check the '
                                  'fast and parallel parsers against',
}

FN_RE = re.compile(r'^(\s*)(?:pub(?:\([^)]*\))?\s+)?(?:default\s+)?(?:const\s+)?(?:async\s+)?'
                   r'(?:unsafe\s+)?(?:extern\s+"[^"]*"\s+)?fn\s+(\w+)')
MOD_RE = re.compile(r'^(\s*)(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*(\{|;)')
CFG_TEST_RE = re.compile(r'^\s*#\[cfg\((?:test|all\(test\b.*)\)\]\s*$')
ATTR_RE = re.compile(r'^\s*#\[')
USE_START_RE = re.compile(r'^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+')
PATH_RE = re.compile(r'(?<![\w:])((?:super::)+|crate::|self::)((?:\w+::)*\w+)')
CHAR_RE = re.compile(r"'(?:\\.|[^'\\])'")
STRING_RE = re.compile(r'"(?:\\.|[^"\\])*"')
USE_TOKEN_RE = re.compile(r'\w+|::|[{},*;]')


def code_of(line):
    """The line without string and char literals and without its // comment."""
    line = CHAR_RE.sub("' '", line)
    line = STRING_RE.sub('""', line)
    i = line.find('//')
    return line if i < 0 else line[:i]


class Source:
    """One .rs file of a crate: its module path from the crate root and its lines."""

    def __init__(self, crate_dir, path):
        self.path = path
        self.rel = os.path.relpath(path, os.path.dirname(crate_dir))
        parts = os.path.relpath(path, os.path.join(crate_dir, 'src')).split(os.sep)
        stem = parts[-1][:-3]
        if len(parts) == 1 and stem in ('lib', 'main'):
            self.module = []
        elif stem == 'mod':
            self.module = parts[:-1]
        else:
            self.module = parts[:-1] + [stem]
        # Files of `mod x;` children live in the folder named after the module, except for
        # lib.rs, main.rs and mod.rs, whose children sit beside them.
        self.child_dir = (os.path.dirname(path) if stem in ('lib', 'main', 'mod')
                          else os.path.join(os.path.dirname(path), stem))
        with open(path, encoding='utf-8') as f:
            self.lines = f.read().split('\n')


def block_end(lines, start, indent):
    """Index of the line closing the block opened at `start` (rustfmt: `}` at `indent`)."""
    if lines[start].rstrip().endswith('}'):
        return start
    close = indent + '}'
    for i in range(start + 1, len(lines)):
        if lines[i].rstrip() == close or lines[i].startswith(close + ' '):
            return i
    return len(lines) - 1


def scan(source):
    """Walks a file once. Returns (inline module path per line, set of test-only line indexes,
    file paths of `#[cfg(test)] mod x;` children)."""
    lines = source.lines
    module_at = [None] * len(lines)
    test_lines = set()
    test_children = []
    stack = []  # (end line, module path, is test)
    pending_cfg_test = False
    for i, line in enumerate(lines):
        while stack and i > stack[-1][0]:
            stack.pop()
        path = stack[-1][1] if stack else source.module
        in_test = bool(stack) and stack[-1][2]
        module_at[i] = path
        if in_test:
            test_lines.add(i)
        m = MOD_RE.match(line)
        if m:
            indent, name, opener = m.groups()
            is_test = pending_cfg_test or in_test
            if opener == '{':
                end = block_end(lines, i, indent)
                stack.append((end, path + [name], is_test))
                if is_test:
                    test_lines.add(i)
            elif is_test:
                test_children.append(name)
        if CFG_TEST_RE.match(line):
            pending_cfg_test = True
        elif not ATTR_RE.match(line) and line.strip():
            pending_cfg_test = False
    test_files = []
    for name in test_children:
        test_files.append(os.path.join(source.child_dir, name + '.rs'))
        test_files.append(os.path.join(source.child_dir, name))
    return module_at, test_lines, test_files


def use_paths(text):
    """The full paths a `use` statement (without `use` and `;`) names, as lists of segments."""
    tokens = USE_TOKEN_RE.findall(text)
    pos = 0

    def tree(prefix):
        nonlocal pos
        out = []
        segs = list(prefix)
        while pos < len(tokens):
            t = tokens[pos]
            if t == '{':
                pos += 1
                while pos < len(tokens) and tokens[pos] != '}':
                    out.extend(tree(segs))
                    if pos < len(tokens) and tokens[pos] == ',':
                        pos += 1
                pos += 1
                return out
            if t in (',', '}', ';'):
                break
            if t == 'as':
                pos += 2
                continue
            if t != '::':
                segs.append(t)
            pos += 1
        out.append(segs)
        return out

    return tree([])


def resolve(path, here):
    """The absolute module path `path` (segments) names from module `here`, or None when it does
    not start at the crate (`crate`, `super`, `self`)."""
    if not path:
        return None
    if path[0] == 'crate':
        return path[1:]
    if path[0] in ('super', 'self'):
        base = list(here)
        rest = list(path)
        while rest and rest[0] in ('super', 'self'):
            if rest.pop(0) == 'super':
                if not base:
                    return None
                base.pop()
        return base + rest
    return None


def references(source, module_at, skip):
    """(line number, absolute path) for every crate-relative path in the file's code."""
    lines = source.lines
    i = 0
    while i < len(lines):
        if i in skip:
            i += 1
            continue
        code = code_of(lines[i])
        here = module_at[i]
        if USE_START_RE.match(code):
            start = i
            text = USE_START_RE.sub('', code, count=1)
            while ';' not in text and i + 1 < len(lines):
                i += 1
                text += ' ' + code_of(lines[i])
            text = text.split(';')[0]
            for p in use_paths(text):
                target = resolve(p, here)
                if target is not None:
                    yield start + 1, target
        else:
            for m in PATH_RE.finditer(code):
                p = m.group(1).split('::')[:-1] if m.group(1) != 'crate::' else ['crate']
                if m.group(1) == 'self::':
                    p = ['self']
                target = resolve(p + m.group(2).split('::'), here)
                if target is not None:
                    yield i + 1, target
        i += 1


def long_functions(source, skip):
    """(line number, name, length) of every function of the file outside test code."""
    lines = source.lines
    for i, line in enumerate(lines):
        if i in skip:
            continue
        m = FN_RE.match(line)
        if not m:
            continue
        indent = m.group(1)
        j = i
        while j < len(lines):
            stripped = code_of(lines[j]).rstrip()
            if stripped.endswith('{') or stripped.endswith('}'):
                break
            if stripped.endswith(';'):
                j = None
                break
            j += 1
        if j is None or j >= len(lines):
            continue
        end = block_end(lines, j, indent) if not code_of(lines[j]).rstrip().endswith('}') else j
        yield i + 1, m.group(2), end - i + 1


def find_cycle(graph, scc):
    """One cycle through the strongly connected component `scc`, as a list of modules."""
    start = sorted(scc)[0]
    path = [start]
    seen = {start: 0}
    node = start
    while True:
        nxt = sorted(n for n in graph[node] if n in scc)
        # Prefer closing the cycle; else walk to a node not on the path yet.
        if start in nxt and len(path) > 1:
            return path + [start]
        step = next((n for n in nxt if n not in seen), None)
        if step is None:
            step = nxt[0]
            return path[seen[step]:] + [step]
        seen[step] = len(path)
        path.append(step)
        node = step


def strongly_connected(graph):
    """Tarjan's components of more than one node."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def check_crate(crate_dir, findings, functions, files):
    crate = os.path.basename(crate_dir.rstrip(os.sep))
    src = os.path.join(crate_dir, 'src')
    sources = []
    for root, dirs, names in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d != 'tests')
        for name in sorted(names):
            if name.endswith('.rs'):
                sources.append(Source(crate_dir, os.path.join(root, name)))
    top = {s.module[0] for s in sources if s.module}
    test_only = []
    scanned = []
    for s in sources:
        module_at, test_lines, test_files = scan(s)
        test_only.extend(test_files)
        scanned.append((s, module_at, test_lines))
    graph = {m: set() for m in top}
    evidence = {}
    for s, module_at, test_lines in scanned:
        files.append((len(s.lines) - 1 if s.lines[-1] == '' else len(s.lines), s.rel))
        if any(s.path == t or s.path.startswith(t + os.sep) for t in test_only):
            continue
        oracle = bool(s.module) and (crate, s.module[0]) in TEST_ORACLES
        if s.module:
            for line, target in references(s, module_at, test_lines):
                if target and target[0] in top and target[0] != s.module[0]:
                    graph[s.module[0]].add(target[0])
                    evidence.setdefault((s.module[0], target[0]),
                                        '%s:%d' % (s.rel, line))
        if oracle:
            continue
        for line, name, length in long_functions(s, test_lines):
            functions.append((length, '%s:%d %s' % (s.rel, line, name)))
            if length > MAX_FN_LINES:
                findings.append('%s:%d: function %s is %d lines (at most %d outside tests and '
                                'test oracles)' % (s.rel, line, name, length, MAX_FN_LINES))
    for comp in strongly_connected(graph):
        cycle = find_cycle(graph, comp)
        edges = '; '.join('%s -> %s at %s' % (a, b, evidence[(a, b)])
                          for a in sorted(comp) for b in sorted(graph[a]) if b in comp)
        findings.append('%s: module cycle %s (modules %s; their edges: %s)'
                        % (crate, ' -> '.join(cycle), ', '.join(sorted(comp)), edges))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--top', type=int, default=0,
                        help='also print the N longest functions and files')
    parser.add_argument('crates_dir')
    args = parser.parse_args(argv)
    findings, functions, files = [], [], []
    crates = sorted(d for d in os.listdir(args.crates_dir)
                    if os.path.isfile(os.path.join(args.crates_dir, d, 'Cargo.toml'))
                    and os.path.isdir(os.path.join(args.crates_dir, d, 'src')))
    if not crates:
        print('check-rust-layering: no crate under %s' % args.crates_dir, file=sys.stderr)
        return 2
    for crate in crates:
        check_crate(os.path.join(args.crates_dir, crate), findings, functions, files)
    if args.top:
        print('longest functions (outside tests and test oracles):')
        for length, where in sorted(functions, key=lambda f: (-f[0], f[1]))[:args.top]:
            print('  %5d  %s' % (length, where))
        print('longest files:')
        for length, where in sorted(files, key=lambda f: (-f[0], f[1]))[:args.top]:
            print('  %5d  %s' % (length, where))
    for f in findings:
        print('check-rust-layering: %s' % f, file=sys.stderr)
    if findings:
        return 1
    print('check-rust-layering: %d crates, no module cycle, no function over %d lines'
          % (len(crates), MAX_FN_LINES))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
