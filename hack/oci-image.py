#!/usr/bin/env python3
"""Pack a root filesystem directory into a single-layer OCI image archive, without a container engine.

Usage: hack/oci-image.py --rootfs DIR --out IMAGE.tar --ref NAME:TAG [--entrypoint JSON] [--cmd JSON]
                         [--user UID:GID] [--env K=V ...] [--workdir DIR] [--label K=V ...]
                         [--owner PATH=UID:GID ...]

The archive is an OCI image layout (oci-layout, index.json, blobs/sha256/...) that also carries a
docker-style manifest.json, so `docker load`, `podman load`, `ctr images import` and skopeo
(oci-archive:) all read it. Reproducible: entries sorted, mtimes = SOURCE_DATE_EPOCH (default 0),
files owned by root unless --owner says otherwise, gzip without timestamp.
"""
import argparse
import gzip
import hashlib
import io
import json
import os
import sys
import tarfile


def layer_tar(rootfs, mtime, owners):
    paths = []
    for dirpath, dirnames, filenames in os.walk(rootfs):   # does not follow symlinked dirs
        rel_dir = os.path.relpath(dirpath, rootfs)
        for n in dirnames + filenames:
            paths.append(os.path.normpath(os.path.join(rel_dir, n)))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode='w', format=tarfile.PAX_FORMAT) as t:
        for rel in sorted(paths):
            full = os.path.join(rootfs, rel)
            ti = t.gettarinfo(full, arcname=rel)
            ti.mtime = mtime
            ti.uid, ti.gid, ti.uname, ti.gname = 0, 0, '', ''
            for prefix, (uid, gid) in owners.items():
                if rel == prefix or rel.startswith(prefix + '/'):
                    ti.uid, ti.gid = uid, gid
            if ti.isreg():
                with open(full, 'rb') as f:
                    t.addfile(ti, f)
            else:
                t.addfile(ti)
    return buf.getvalue()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--rootfs', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--ref', required=True)
    ap.add_argument('--entrypoint', default='null')
    ap.add_argument('--cmd', default='null')
    ap.add_argument('--user', default='65532:65532')
    ap.add_argument('--env', action='append', default=[])
    ap.add_argument('--workdir', default='/')
    ap.add_argument('--label', action='append', default=[])
    ap.add_argument('--owner', action='append', default=[], help='PATH=UID:GID (relative to the rootfs)')
    a = ap.parse_args()
    mtime = int(os.environ.get('SOURCE_DATE_EPOCH', '0'))
    owners = {}
    for o in a.owner:
        p, ids = o.split('=', 1)
        uid, gid = ids.split(':')
        owners[p.strip('/')] = (int(uid), int(gid))

    raw = layer_tar(a.rootfs, mtime, owners)
    diff_id = 'sha256:' + hashlib.sha256(raw).hexdigest()
    gz = io.BytesIO()
    with gzip.GzipFile(fileobj=gz, mode='wb', mtime=0, compresslevel=6) as g:
        g.write(raw)
    layer = gz.getvalue()
    layer_digest = 'sha256:' + hashlib.sha256(layer).hexdigest()

    created = '1970-01-01T00:00:00Z'
    labels = dict(l.split('=', 1) for l in a.label)
    config = {
        'created': created, 'architecture': 'amd64', 'os': 'linux',
        'config': {'User': a.user, 'Env': a.env, 'Entrypoint': json.loads(a.entrypoint),
                   'Cmd': json.loads(a.cmd), 'WorkingDir': a.workdir, 'Labels': labels},
        'rootfs': {'type': 'layers', 'diff_ids': [diff_id]},
        'history': [{'created': created, 'created_by': 'hack/oci-image.py (rootfs %s)' % os.path.basename(a.rootfs)}],
    }
    cfg = json.dumps(config, sort_keys=True, separators=(',', ':')).encode()
    cfg_digest = 'sha256:' + hashlib.sha256(cfg).hexdigest()
    manifest = {
        'schemaVersion': 2, 'mediaType': 'application/vnd.oci.image.manifest.v1+json',
        'config': {'mediaType': 'application/vnd.oci.image.config.v1+json', 'digest': cfg_digest, 'size': len(cfg)},
        'layers': [{'mediaType': 'application/vnd.oci.image.layer.v1.tar+gzip', 'digest': layer_digest,
                    'size': len(layer)}],
        'annotations': {'org.opencontainers.image.ref.name': a.ref},
    }
    man = json.dumps(manifest, sort_keys=True, separators=(',', ':')).encode()
    man_digest = 'sha256:' + hashlib.sha256(man).hexdigest()
    index = {'schemaVersion': 2, 'mediaType': 'application/vnd.oci.image.index.v1+json',
             'manifests': [{'mediaType': 'application/vnd.oci.image.manifest.v1+json', 'digest': man_digest,
                            'size': len(man), 'annotations': {'io.containerd.image.name': a.ref,
                                                              'org.opencontainers.image.ref.name': a.ref}}]}
    docker_manifest = [{'Config': 'blobs/sha256/' + cfg_digest[7:], 'RepoTags': [a.ref],
                        'Layers': ['blobs/sha256/' + layer_digest[7:]]}]

    tmp = a.out + '.tmp'
    with tarfile.open(tmp, 'w') as t:
        def add(name, data):
            ti = tarfile.TarInfo(name)
            ti.size, ti.mtime, ti.mode = len(data), mtime, 0o644
            t.addfile(ti, io.BytesIO(data))
        add('oci-layout', b'{"imageLayoutVersion":"1.0.0"}')
        add('index.json', json.dumps(index, sort_keys=True).encode())
        add('manifest.json', json.dumps(docker_manifest).encode())
        for d, b in ((cfg_digest, cfg), (man_digest, man), (layer_digest, layer)):
            add('blobs/sha256/' + d[7:], b)
    os.replace(tmp, a.out)
    print('%s: %s (%d MiB compressed), manifest %s' % (a.out, a.ref, len(layer) >> 20, man_digest))


if __name__ == '__main__':
    sys.exit(main())
