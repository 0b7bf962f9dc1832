"""The load step's command line as the operator writes it, for scripts that run the loader the way
a build does (e2e/local/e2e_local.py, hack/test_oci_images.py).

The arguments come from the golden file the operator's test keeps in step with specs.LoaderArgs
(operator/internal/specs/testdata/loader-args.jsonl, `make generate-loader-args`), which the
loader's own parser also reads in a test; scripts never restate them. A script only swaps
values it must change to run outside a pod (paths on this machine, a free metrics port), by
option name, and fails when an option it swaps is no longer in the command line.
"""
import json
import os

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
GOLDEN = os.path.join(ROOT, 'operator', 'internal', 'specs', 'testdata', 'loader-args.jsonl')


def cases(path=GOLDEN):
    """Every case of the golden file by name: {'name', 'expect', 'args'}."""
    out = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                case = json.loads(line)
                assert case['name'] not in out, '%s:%d: case %s twice' % (path, n, case['name'])
                out[case['name']] = case
    return out


def load_step_args(name, replace=None, inputs=None, path=GOLDEN):
    """The arguments of case `name` (after the program name), with the values of the options in
    `replace` ({'--loc': '/tmp/db', ...}) swapped and, when `inputs` is given, the input paths
    swapped for it. Raises when an option in `replace` is not in the case's command line, or
    when the command line is not `load`, `--option value` pairs and the inputs (a flag without a
    value would need this reader taught about it)."""
    all_cases = cases(path)
    if name not in all_cases:
        raise KeyError('%s has no case %r (cases: %s)' % (path, name, ', '.join(all_cases)))
    case = all_cases[name]
    args = list(case['args'])
    n_inputs = len(case['expect']['inputs'])
    head, tail = args[:len(args) - n_inputs], args[len(args) - n_inputs:]
    if head[:1] != ['load'] or (len(head) - 1) % 2:
        raise ValueError('%s: %r is not `load` followed by --option value pairs' % (name, args))
    replace = dict(replace or {})
    out = ['load']
    for opt, value in zip(head[1::2], head[2::2]):
        if not opt.startswith('--') or value.startswith('--'):
            raise ValueError('%s: %s %s is not an --option value pair in %r' % (name, opt, value, args))
        out += [opt, replace.pop(opt, value)]
    if replace:
        raise ValueError('%s: the load step no longer passes %s: %r' % (name, ', '.join(sorted(replace)), args))
    return out + (list(inputs) if inputs is not None else tail)
