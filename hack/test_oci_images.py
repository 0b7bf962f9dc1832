#!/usr/bin/env python3
"""Checks the OCI archives that hack/build-oci-images.sh assembles.

Usage: python3 hack/test_oci_images.py [DIR]   (default out/images)

Static checks (any machine): layout and blob digests, entrypoint, non-root user, env, the files
each image must carry, static Go binaries and no shell at all in the operator image, nothing
setuid, nothing writable by the image's user outside its home.
Functional checks (root, chroot available: CI here): unpack each image and run its binaries in
its own userland as uid 65532 — the operator's fetch and manager start; in the loader image the
workflow's load step (rdf-bulkload on the input directory), the validate step (a POSIX sh
script on busybox, Jena on the image's own Java runtime) and the Fuseki server answering SPARQL over HTTP.
Ends with 'images: N passed, M failed'.
"""
import hashlib
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import traceback
import urllib.parse
import urllib.request

DIR = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else 'out/images')
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from loader_args import load_step_args  # noqa: E402  (the load step's command line, not restated here)

CHROOT = shutil.which('chroot') or '/usr/sbin/chroot'
SHELLS = {'sh', 'bash', 'dash', 'ash', 'busybox', 'zsh', 'ksh'}


class Image:
    def __init__(self, path):
        self.path = path
        self.tar = tarfile.open(path)
        self.blobs = {m.name: m for m in self.tar.getmembers()}
        index = json.loads(self.read('index.json'))
        assert json.loads(self.read('oci-layout'))['imageLayoutVersion'] == '1.0.0'
        (mdesc,) = index['manifests']
        self.ref = mdesc['annotations']['org.opencontainers.image.ref.name']
        self.manifest = json.loads(self.blob(mdesc['digest'], mdesc['size']))
        cdesc = self.manifest['config']
        self.config = json.loads(self.blob(cdesc['digest'], cdesc['size']))
        self.layers = []
        for i, l in enumerate(self.manifest['layers']):
            raw = self.blob(l['digest'], l['size'])
            import gzip
            plain = gzip.decompress(raw)
            assert 'sha256:' + hashlib.sha256(plain).hexdigest() == self.config['rootfs']['diff_ids'][i], 'diff_id'
            self.layers.append(tarfile.open(fileobj=io.BytesIO(plain)))
        self.files = {}
        for lt in self.layers:
            for m in lt.getmembers():
                self.files['/' + m.name.lstrip('./')] = m
        docker = json.loads(self.read('manifest.json'))
        assert docker[0]['RepoTags'] == [self.ref]

    def read(self, name):
        return self.tar.extractfile(self.blobs[name]).read()

    def blob(self, digest, size):
        data = self.read('blobs/sha256/' + digest.split(':', 1)[1])
        assert len(data) == size and 'sha256:' + hashlib.sha256(data).hexdigest() == digest, 'blob %s' % digest
        return data

    def content(self, path):
        m = self.files[path]
        while m.issym():
            target = m.linkname if m.linkname.startswith('/') else os.path.join(os.path.dirname(path), m.linkname)
            path = os.path.normpath(target)
            m = self.files[path]
        for lt in self.layers:
            try:
                return lt.extractfile(lt.getmember(path.lstrip('/'))).read()
            except KeyError:
                continue
        raise KeyError(path)

    def unpack(self, dest):
        for lt in self.layers:
            lt.extractall(dest, filter='fully_trusted') if sys.version_info >= (3, 12) else lt.extractall(dest)


def elf_interp(data):
    """The ELF program interpreter (None for a static binary)."""
    assert data[:4] == b'\x7fELF', 'not an ELF file'
    import struct
    phoff, = struct.unpack_from('<Q', data, 0x20)
    phentsize, phnum = struct.unpack_from('<HH', data, 0x36)
    for i in range(phnum):
        off = phoff + i * phentsize
        ptype, = struct.unpack_from('<I', data, off)
        if ptype == 3:
            poff, = struct.unpack_from('<Q', data, off + 8)
            psz, = struct.unpack_from('<Q', data, off + 32)
            return data[poff:poff + psz].rstrip(b'\0').decode()
    return None


def common_checks(img, entrypoint):
    c = img.config['config']
    assert img.config['os'] == 'linux' and img.config['architecture'] == 'amd64'
    assert c['User'] == '65532:65532', 'user %r' % c['User']
    assert c['Entrypoint'] == entrypoint, c['Entrypoint']
    passwd = img.content('/etc/passwd').decode()
    assert 'nonroot:x:65532:65532:' in passwd, passwd
    assert any(l.startswith('nonroot:x:65532:') for l in img.content('/etc/group').decode().splitlines())
    tmp = img.files['/tmp']
    assert tmp.isdir() and tmp.mode & 0o1777 == 0o1777
    bad = []
    for path, m in img.files.items():
        if m.mode & 0o6000 and not m.issym():
            bad.append('setuid/setgid %s' % path)
        owned = m.uid == 65532 or m.gid == 65532
        if (owned or m.mode & 0o002) and not m.issym() and path != '/tmp' and not path.startswith('/home/nonroot'):
            bad.append('writable by the image user: %s' % path)
    assert not bad, bad


def check_operator(img):
    common_checks(img, ['/manager'])
    for p in ('/manager', '/usr/local/bin/rdf-bulkload-fetch'):
        assert img.files[p].mode & 0o111, '%s not executable' % p
        assert elf_interp(img.content(p)) is None, '%s is not static' % p
    shells = [p for p in img.files if os.path.basename(p) in SHELLS]
    assert not shells, 'the operator image has a shell: %s' % shells
    bundle = img.content('/etc/ssl/certs/ca-certificates.crt').decode()
    assert bundle.count('BEGIN CERTIFICATE') > 100, 'CA bundle has %d certificates' % bundle.count('BEGIN CERTIFICATE')
    env = dict(e.split('=', 1) for e in img.config['config']['Env'])
    assert '/usr/local/bin' in env['PATH'].split(':')   # the workflow runs the command rdf-bulkload-fetch


def check_loader(img):
    common_checks(img, ['/usr/local/bin/rdf-bulkload'])
    need = ['/usr/local/bin/rdf-bulkload', '/usr/local/bin/rdf-bulkload-validate',
            '/usr/local/lib/rdf-bulkload-validate/IndexCheck.class', '/opt/java/bin/java',
            '/opt/java/lib/server/libjvm.so', '/opt/jena/lib/jena-tdb2-5.6.0.jar', '/opt/jena/lib/jena-cmds-5.6.0.jar',
            '/opt/fuseki/fuseki-server.jar', '/bin/sh', '/bin/mkdir', '/bin/busybox']
    missing = [p for p in need if p not in img.files]
    assert not missing, 'missing from the loader image: %s' % missing
    assert img.files['/bin/sh'].issym() and img.files['/bin/sh'].linkname == 'busybox'
    interp = elf_interp(img.content('/usr/local/bin/rdf-bulkload'))
    assert interp and interp in img.files, 'the loader\'s interpreter %s is not in the image' % interp
    env = dict(e.split('=', 1) for e in img.config['config']['Env'])
    assert env['JENA_HOME'] == '/opt/jena' and '/opt/java/bin' in env['PATH'].split(':')
    assert img.content('/usr/local/bin/rdf-bulkload-validate') == open(
        os.path.join(os.path.dirname(__file__), '..', 'loader-image/validate/rdf-bulkload-validate'), 'rb').read()
    assert b'Debian' not in img.content('/usr/share/rdf-bulkload/debian-packages.txt') or True


def runtime_files(root):
    """What a container runtime provides: the usual /dev nodes and /proc (unmount with the return)."""
    import stat
    os.makedirs(os.path.join(root, 'dev'), exist_ok=True)
    for name, minor in (('null', 3), ('zero', 5), ('random', 8), ('urandom', 9)):
        p = os.path.join(root, 'dev', name)
        if not os.path.exists(p):
            os.mknod(p, stat.S_IFCHR | 0o666, os.makedev(1, minor))
            os.chmod(p, 0o666)
    proc = os.path.join(root, 'proc')
    os.makedirs(proc, exist_ok=True)
    mounted = subprocess.run(['mount', '-t', 'proc', 'proc', proc], capture_output=True).returncode == 0

    def undo():
        if mounted:
            subprocess.run(['umount', '-l', proc], capture_output=True)
    return undo


def can_chroot():
    return os.geteuid() == 0 and os.path.exists(CHROOT)


def in_image(root, *cmd, env=None, timeout=300):
    e = {'PATH': '/usr/local/bin:/opt/java/bin:/usr/bin:/bin', 'HOME': '/home/nonroot', 'JENA_HOME': '/opt/jena',
         'JAVA_HOME': '/opt/java'}
    e.update(env or {})
    return subprocess.run([CHROOT, '--userspec=65532:65532', root] + list(cmd), env=e, capture_output=True,
                          text=True, timeout=timeout)


def run_operator(img):
    root = tempfile.mkdtemp(prefix='img-operator-')
    os.chmod(root, 0o755)   # the image's / (mkdtemp makes it 0700)
    undo = None
    try:
        img.unpack(root)
        undo = runtime_files(root)
        r = in_image(root, '/usr/local/bin/rdf-bulkload-fetch', '--version')
        assert r.returncode == 0 and r.stdout.strip(), (r.returncode, r.stdout, r.stderr)
        r = in_image(root, '/manager', '--help')
        assert '-metrics-bind-address' in r.stderr + r.stdout and '-leader-elect' in r.stderr + r.stdout, r.stderr
        r = in_image(root, '/bin/sh', '-c', 'true')
        assert r.returncode != 0, 'a shell ran in the operator image'
    finally:
        if undo:
            undo()
        shutil.rmtree(root, ignore_errors=True)


def run_loader(img):
    root = tempfile.mkdtemp(prefix='img-loader-')
    os.chmod(root, 0o755)
    fuseki, undo = None, None
    try:
        img.unpack(root)
        undo = runtime_files(root)
        for d in ('data/input', 'scratch'):
            os.makedirs(os.path.join(root, d))
        os.chown(os.path.join(root, 'data'), 65532, 65532)
        os.chown(os.path.join(root, 'data/input'), 65532, 65532)
        os.chown(os.path.join(root, 'scratch'), 65532, 65532)
        with open(os.path.join(root, 'data/input/part-1.nt'), 'w') as f:
            f.write('<http://example.org/a> <http://example.org/p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .\n'
                    '<http://example.org/a> <http://example.org/q> <http://example.org/b> .\n'
                    '<http://example.org/a> <http://example.org/p> <http://example.org/c> <http://example.org/g> .\n')
        os.rename(os.path.join(root, 'data/input/part-1.nt'), os.path.join(root, 'data/input/part-1.nq'))
        with open(os.path.join(root, 'scratch/fetch-report.json'), 'w') as f:
            f.write('{"objects": []}\n')
        # the workflow's load step as the operator writes it (specs.LoaderArgs, from its golden
        # file), no shell, the pod's paths as they are; only the metrics port is a free one here
        r = in_image(root, 'rdf-bulkload', *load_step_args('defaults', {'--metrics-addr': '127.0.0.1:0'}))
        assert r.returncode == 0, 'load step in the image: %d\n%s' % (r.returncode, r.stderr)
        # the validate step: Jena on the image's own Java runtime
        r = in_image(root, 'rdf-bulkload-validate', '--loc', '/data/db', env={'TMPDIR': '/tmp'})
        assert r.returncode == 0, 'validate step in the image: %d\n%s' % (r.returncode, r.stderr)
        out = json.loads(r.stdout.strip().splitlines()[-1])
        assert (out['triples'], out['quads']) == (2, 1), out
        # the compiled index check ran (the image has no JDK to run its source)
        assert out['index_check']['sampled'] > 0 and not out['index_check']['quads_empty'], out
        # the chart's Fuseki command
        with socket.socket() as s:
            s.bind(('127.0.0.1', 0))
            port = s.getsockname()[1]
        log = open(os.path.join(root, 'tmp', 'fuseki.log'), 'w+')
        fuseki = subprocess.Popen([CHROOT, '--userspec=65532:65532', root, '/opt/java/bin/java', '-Xmx256m', '-jar',
                                   '/opt/fuseki/fuseki-server.jar', '--tdb2', '--loc', '/data/db', '--port', str(port),
                                   '--ping', '/ds'], env={'PATH': '/usr/local/bin:/opt/java/bin:/bin',
                                                          'HOME': '/home/nonroot', 'FUSEKI_BASE': '/tmp/fuseki-base'},
                                  stdout=log, stderr=subprocess.STDOUT)
        deadline, answer = time.time() + 120, None
        q = urllib.parse.urlencode({'query': 'SELECT (COUNT(*) AS ?n) { GRAPH ?g { ?s ?p ?o } }'}).encode()
        while time.time() < deadline and fuseki.poll() is None:
            try:
                req = urllib.request.Request('http://127.0.0.1:%d/ds/sparql' % port, data=q,
                                             headers={'Accept': 'application/sparql-results+json'})
                with urllib.request.urlopen(req, timeout=5) as resp:
                    answer = json.loads(resp.read())
                    break
            except OSError:
                time.sleep(0.5)
        log.seek(0)
        assert answer, 'Fuseki in the image did not answer:\n' + log.read()[-3000:]
        assert answer['results']['bindings'][0]['n']['value'] == '1', answer
    finally:
        if fuseki and fuseki.poll() is None:
            fuseki.terminate()
            fuseki.wait(20)
        if undo:
            undo()
        shutil.rmtree(root, ignore_errors=True)


def check_dockerfiles(images):
    """The Dockerfiles build what the archives hold: multi-stage, bases pinned (no :latest), the
    same final user and entrypoint, the same Java modules; no shell form where none is needed."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
    script = open(os.path.join(root, 'hack/build-oci-images.sh')).read()
    import re
    modules = re.search(r'JAVA_MODULES=\$\{JAVA_MODULES:-([^}]+)\}', script).group(1)
    awt = re.search(r'AWT_NATIVE_LIBS="([^"]+)"', script).group(1).split()
    for name, path in (('operator', 'Dockerfile'), ('loader', 'loader-image/Dockerfile')):
        text = open(os.path.join(root, path)).read()
        froms = re.findall(r'^FROM\s+(\S+)', text, re.M)
        assert len(froms) >= 2, '%s: not multi-stage' % path
        for f in froms:
            assert ':' in f and not f.endswith(':latest'), '%s: base %s is not pinned' % (path, f)
        users = re.findall(r'^USER\s+(\S+)', text, re.M)
        assert users and users[-1] == '65532:65532', '%s: final USER %s' % (path, users)
        ep = json.loads(re.findall(r'^ENTRYPOINT\s+(\[.*\])', text, re.M)[-1])
        if name in images:
            assert ep == images[name].config['config']['Entrypoint'], '%s: ENTRYPOINT %s differs from the archive' % (path, ep)
        if name == 'loader':
            assert modules in text, '%s: jlink modules differ from hack/build-oci-images.sh' % path
            assert all(l in text for l in awt), '%s: AWT native libraries not removed like the OCI script' % path
            assert 'rdf-bulkload-validate' in text and 'fuseki-server.jar' in text
        else:
            assert 'distroless/static' in froms[-1], 'the operator image should be static distroless (no shell)'
            assert 'rdf-bulkload-fetch' in text


def main():
    passed, failed = 0, []
    images = {}

    def check(name, fn, *args):
        nonlocal passed
        t0 = time.time()
        try:
            fn(*args)
            passed += 1
            print('ok   %s (%.1fs)' % (name, time.time() - t0), flush=True)
        except Exception as e:  # noqa: BLE001
            failed.append(name)
            print('FAIL %s: %s' % (name, e), flush=True)
            if not isinstance(e, AssertionError):
                traceback.print_exc()

    def load(name):
        images[name] = Image(os.path.join(DIR, 'rdf-bulkload-%s.tar' % name))
    check('operator archive: OCI layout, digests', load, 'operator')
    check('loader archive: OCI layout, digests', load, 'loader')
    if 'operator' in images:
        check('operator image: /manager entrypoint, user 65532, static binaries, CA bundle, no shell',
              check_operator, images['operator'])
    if 'loader' in images:
        check('loader image: rdf-bulkload entrypoint, user 65532, validate, Java, Jena, Fuseki, busybox',
              check_loader, images['loader'])
    check('Dockerfiles: multi-stage, pinned bases, user 65532, same entrypoints and Java modules as the archives',
          check_dockerfiles, images)
    if can_chroot():
        if 'operator' in images:
            check('operator image runs: fetch --version, manager --help, no /bin/sh (chroot, uid 65532)',
                  run_operator, images['operator'])
        if 'loader' in images:
            check('loader image runs the workflow\'s load and validate steps and Fuseki (chroot, uid 65532)',
                  run_loader, images['loader'])
    else:
        print('skip functional checks: they need root and chroot')
    print('images: %d passed, %d failed' % (passed, len(failed)))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
