#!/usr/bin/env python3
"""Self-test of hack/check-rust-layering.py on tiny synthetic crates (make lint-rust).

Usage: python3 hack/test_check_rust_layering.py
"""
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'check-rust-layering.py')


def write_crate(root, name, files):
    crate = os.path.join(root, name)
    with_src = {'Cargo.toml': '[package]\nname = "%s"\n' % name}
    with_src.update({os.path.join('src', p): text for p, text in files.items()})
    for path, text in with_src.items():
        full = os.path.join(crate, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, 'w') as f:
            f.write(text)


def body(lines):
    return ''.join('    let _x%d = %d;\n' % (i, i) for i in range(lines))


def run(root):
    p = subprocess.run([sys.executable, SCRIPT, root], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def clean_crate(root):
    """Layered a <- b <- c, nested files under b/, a long function only in test code, a 120-line
    function, and crate paths in comments and strings that are not imports."""
    write_crate(root, 'clean', {
        'lib.rs': 'mod a;\nmod b;\nmod c;\n',
        'a.rs': '//! Uses [`crate::c`] in a doc link only.\npub(crate) const N: u32 = 1;\n'
                'pub(crate) fn s() -> &\'static str {\n    "crate::b::x"\n}\n'
                '#[cfg(test)]\nmod tests {\n    use crate::c::C;\n    fn long() {\n'
                + body(200) + '    }\n}\n',
        'b/mod.rs': 'mod inner;\nuse crate::a::N;\npub(crate) use inner::f;\n',
        'b/inner.rs': 'use super::super::a;\npub(crate) fn f() -> u32 {\n'
                      + body(117) + '    a::N\n}\n',
        'c.rs': 'use crate::{a, b::{self, f}};\npub(crate) struct C;\n'
                'fn g() -> u32 {\n    crate::a::N + f()\n}\n',
    })


def bad_crate(root):
    """A cycle a -> b -> c -> a (through a grouped use, a path and super::), and a function of
    121 lines."""
    write_crate(root, 'bad', {
        'lib.rs': 'mod a;\nmod b;\nmod c;\n',
        'a.rs': 'use crate::{\n    b::B,\n    c,\n};\npub(crate) struct A;\n',
        'b.rs': 'pub(crate) struct B;\nfn g() {\n    let _ = crate::c::C;\n}\n',
        'c/mod.rs': 'mod deep;\npub(crate) struct C;\n',
        'c/deep.rs': 'fn h() {\n    let _ = super::super::a::A;\n}\n'
                     'pub(crate) fn too_long() {\n' + body(119) + '}\n',
    })


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        clean = os.path.join(tmp, 'clean')
        clean_crate(clean)
        rc, out = run(clean)
        if rc != 0:
            failures.append('clean crate: exit %d, want 0:\n%s' % (rc, out))

        bad = os.path.join(tmp, 'bad')
        bad_crate(bad)
        rc, out = run(bad)
        if rc != 1:
            failures.append('bad crate: exit %d, want 1:\n%s' % (rc, out))
        for want in ('module cycle', 'modules a, b, c', 'function too_long is 121 lines'):
            if want not in out:
                failures.append('bad crate: %r not reported:\n%s' % (want, out))
    for f in failures:
        print('FAIL: %s' % f, file=sys.stderr)
    if failures:
        return 1
    print('test_check_rust_layering: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
