"""Fetching the real-world datasets named in realworld/manifest.toml (see test_realworld.py).

Each package is downloaded once with its registry's ordinary client into
$RDF_BULKLOAD_CACHE/realworld/<registry>-<name>-<version>/, its artifact checked against the
manifest's size and sha256 (and, for Maven, the .sha1 Central publishes), and the listed paths
extracted into files/ beside it and checked against their own sha256. A download that fails
raises Unreachable; a digest that does not match raises AssertionError (always a failure).
"""
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import urllib.request
import zipfile

from conftest import CACHE, file_lock, sha256_file

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = os.path.join(HERE, 'realworld', 'manifest.toml')
CENTRAL = os.environ.get('MAVEN_CENTRAL', 'https://repo1.maven.org/maven2')


class Unreachable(Exception):
    """The registry could not be reached (or refused the download)."""


def load_manifest(path=MANIFEST):
    with open(path, 'rb') as f:
        m = tomllib.load(f)
    for ds in m['datasets']:
        assert ds['package'] in m['packages'], 'dataset %s: unknown package %s' % (ds['name'], ds['package'])
        assert ds['files'], ds['name']
    names = [d['name'] for d in m['datasets']]
    assert len(names) == len(set(names)), 'dataset names repeat: %r' % names
    return m


def package_dir(pkg):
    slug = re.sub(r'[^A-Za-z0-9._-]+', '-', pkg['name']).strip('-')
    return os.path.join(CACHE, 'realworld', '%s-%s-%s' % (pkg['registry'], slug, pkg['version']))


def _run(cmd, cwd=None, timeout=900):
    try:
        r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           errors='replace', timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise Unreachable('%s: %s' % (' '.join(cmd), e)) from e
    if r.returncode != 0:
        raise Unreachable('%s exited %d:\n%s' % (' '.join(cmd), r.returncode, (r.stderr or r.stdout)[-2000:]))
    return r


def _local_copies(pkg):
    """Where hack/install-jena.sh keeps Jena's jars (fetched from Central, checked there)."""
    jena = os.path.join(CACHE, 'jena-%s' % pkg['version'])
    return [p for p in (os.path.join(jena, pkg['file']),
                        os.path.join(jena, 'apache-jena-%s' % pkg['version'], 'lib', pkg['file']))
            if pkg['name'].startswith('org.apache.jena:') and os.path.isfile(p)]


def _download(pkg, dest):
    """Download the package's artifact into directory dest with the registry's client."""
    reg, name, version = pkg['registry'], pkg['name'], pkg['version']
    if reg == 'npm':
        _run(['npm', 'pack', '--silent', '--pack-destination', dest, '%s@%s' % (name, version)], cwd=dest)
    elif reg == 'pypi':
        kind = ['--only-binary=:all:'] if pkg['file'].endswith('.whl') else ['--no-binary=:all:']
        _run([sys.executable, '-m', 'pip', 'download', '--no-deps', '--disable-pip-version-check', '-q',
              '-d', dest] + kind + ['%s==%s' % (name, version)], cwd=dest)
    elif reg == 'maven':
        group, artifact = name.split(':')
        for local in _local_copies(pkg):     # hack/install-jena.sh's verified download
            if hashlib.sha1(open(local, 'rb').read()).hexdigest() == pkg['sha1']:
                shutil.copyfile(local, os.path.join(dest, pkg['file']))
                return os.path.join(dest, pkg['file'])
        url = '%s/%s/%s/%s/%s' % (CENTRAL, group.replace('.', '/'), artifact, version, pkg['file'])
        try:
            with urllib.request.urlopen(url, timeout=120) as r, open(os.path.join(dest, pkg['file']), 'wb') as f:
                shutil.copyfileobj(r, f)
            with urllib.request.urlopen(url + '.sha1', timeout=120) as r:
                published = r.read().decode().split()[0]
        except OSError as e:
            raise Unreachable('%s: %s' % (url, e)) from e
        got = hashlib.sha1(open(os.path.join(dest, pkg['file']), 'rb').read()).hexdigest()
        assert got == published == pkg['sha1'], '%s: sha1 %s, Central publishes %s, manifest pins %s' % (
            pkg['file'], got, published, pkg['sha1'])
    else:
        raise AssertionError('unknown registry %r' % reg)
    path = os.path.join(dest, pkg['file'])
    assert os.path.exists(path), '%s %s %s: expected %s, the client wrote %r' % (
        reg, name, version, pkg['file'], sorted(os.listdir(dest)))
    return path


def _extract(archive, member, out):
    os.makedirs(os.path.dirname(out), exist_ok=True)
    if archive.endswith(('.whl', '.jar', '.zip')):
        with zipfile.ZipFile(archive) as z, z.open(member) as src, open(out, 'wb') as dst:
            shutil.copyfileobj(src, dst)
    else:
        with tarfile.open(archive) as t:
            src = t.extractfile(member)
            assert src is not None, '%s: %s is not a file' % (archive, member)
            with open(out, 'wb') as dst:
                shutil.copyfileobj(src, dst)


def fetch_package(pkg):
    """The package's artifact, downloaded and verified once (a cache hit downloads nothing)."""
    d = package_dir(pkg)
    art = os.path.join(d, pkg['file'])
    with file_lock(d + '.lock'):
        if not os.path.exists(art):
            os.makedirs(d, exist_ok=True)
            with tempfile.TemporaryDirectory(prefix='.dl-', dir=d) as tmp:
                got = _download(pkg, tmp)
                size = os.path.getsize(got)
                assert size == pkg['size'], '%s: %d bytes, manifest says %d' % (pkg['file'], size, pkg['size'])
                digest = sha256_file(got)
                assert digest == pkg['sha256'], '%s: sha256 %s, manifest pins %s' % (pkg['file'], digest, pkg['sha256'])
                os.rename(got, art)
    return art


def dataset_files(manifest, ds):
    """Local paths of the dataset's files (fetched and extracted as needed), in load order."""
    pkg = manifest['packages'][ds['package']]
    d = package_dir(pkg)
    out = []
    for member, want in ds['files']:
        path = os.path.join(d, 'files', member)
        if not (os.path.exists(path) and sha256_file(path) == want):
            art = fetch_package(pkg)
            with file_lock(d + '.lock'):
                _extract(art, member, path + '.tmp')
                got = sha256_file(path + '.tmp')
                assert got == want, '%s in %s: sha256 %s, manifest pins %s' % (member, pkg['file'], got, want)
                os.rename(path + '.tmp', path)
        out.append(path)
    return out
