"""Writes an OCI image archive from a root folder, for `ctr images import`: one layer, or a layer
over the layers of a base image's archive.

No registry is reachable here, so every image the cluster runs is built from a folder and imported
into containerd under its upstream name and tag (OCI image-spec: image-layout.md, manifest.md,
config.md; containerd names an imported image by the `io.containerd.image.name` annotation).
"""

import argparse
import gzip
import hashlib
import io
import json
import os
import sys
import tarfile
import time


def _blob(out: tarfile.TarFile, data: bytes) -> tuple[str, int]:
    digest = hashlib.sha256(data).hexdigest()
    info = tarfile.TarInfo(f"blobs/sha256/{digest}")
    info.size = len(data)
    info.mtime = int(time.time())
    out.addfile(info, io.BytesIO(data))
    return f"sha256:{digest}", len(data)


def _layer(root: str) -> tuple[bytes, str]:
    """The root folder as a gzipped tar, and the digest of the uncompressed tar (the diff id)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as layer:
        for entry in sorted(os.listdir(root)):
            layer.add(os.path.join(root, entry), arcname=entry)
    plain = raw.getvalue()
    return gzip.compress(plain, compresslevel=1), "sha256:" + hashlib.sha256(plain).hexdigest()


def _base_layers(archive: str) -> tuple[list[tuple[dict, bytes]], list[str]]:
    """A base image archive's layers (descriptor, blob) and their diff ids, bottom first."""
    with tarfile.open(archive) as base:

        def read(name: str) -> bytes:
            return base.extractfile(name).read()

        index = json.loads(read("index.json"))
        manifest = json.loads(read(_path(index["manifests"][0]["digest"])))
        config = json.loads(read(_path(manifest["config"]["digest"])))
        layers = [(d, read(_path(d["digest"]))) for d in manifest["layers"]]
    return layers, config["rootfs"]["diff_ids"]


def _base_file(archive: str, name: str) -> bytes:
    """A file of a base image archive as its top layer holding it has it (b"" if none does)."""
    layers, _ = _base_layers(archive)
    found = b""
    for _, blob in layers:
        with tarfile.open(fileobj=io.BytesIO(gzip.decompress(blob))) as layer:
            for member in layer.getmembers():
                if member.name.lstrip("./") == name and member.isfile():
                    found = layer.extractfile(member).read()
    return found


def add_user(root: str, base: str, name: str, uid: int) -> None:
    """Write ROOT/etc/passwd and /etc/group as the base image's with a user NAME of UID and its
    group, as a Dockerfile's ``useradd NAME -m -u UID`` leaves them (the caller makes the home)."""
    os.makedirs(os.path.join(root, "etc"), exist_ok=True)
    for path, line in (
        ("etc/passwd", f"{name}:x:{uid}:{uid}::/home/{name}:/bin/sh\n"),
        ("etc/group", f"{name}:x:{uid}:\n"),
    ):
        with open(os.path.join(root, path), "wb") as out:
            out.write(_base_file(base, path) + line.encode())


def _path(digest: str) -> str:
    return "blobs/" + digest.replace(":", "/")


def write_image(
    root: str, ref: str, entrypoint: list[str], env: list[str], user: str, dest: str, base: str = ""
) -> None:
    below, diff_ids = _base_layers(base) if base else ([], [])
    layer, diff_id = _layer(root)
    config = {
        "architecture": "amd64",
        "os": "linux",
        "config": {"Entrypoint": entrypoint or None, "Env": env, "User": user, "WorkingDir": "/"},
        "rootfs": {"type": "layers", "diff_ids": [*diff_ids, diff_id]},
    }
    with tarfile.open(dest + ".tmp", "w") as out:
        descriptors = [descriptor for descriptor, _ in below]
        for _, blob in below:
            _blob(out, blob)
        layer_digest, layer_size = _blob(out, layer)
        config_digest, config_size = _blob(out, json.dumps(config).encode())
        manifest = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {
                "mediaType": "application/vnd.oci.image.config.v1+json",
                "digest": config_digest,
                "size": config_size,
            },
            "layers": [
                *descriptors,
                {
                    "mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                    "digest": layer_digest,
                    "size": layer_size,
                },
            ],
        }
        manifest_digest, manifest_size = _blob(out, json.dumps(manifest).encode())
        index = {
            "schemaVersion": 2,
            "manifests": [
                {
                    "mediaType": "application/vnd.oci.image.manifest.v1+json",
                    "digest": manifest_digest,
                    "size": manifest_size,
                    "annotations": {
                        "io.containerd.image.name": ref,
                        "org.opencontainers.image.ref.name": ref.rsplit(":", 1)[-1],
                    },
                }
            ],
        }
        for name, data in (
            ("oci-layout", json.dumps({"imageLayoutVersion": "1.0.0"}).encode()),
            ("index.json", json.dumps(index).encode()),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            out.addfile(info, io.BytesIO(data))
    os.replace(dest + ".tmp", dest)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", help="the image's root folder")
    parser.add_argument("ref", help="the image's name and tag, e.g. registry.k8s.io/pause:3.10.1")
    parser.add_argument("dest", help="the archive to write")
    parser.add_argument("--entrypoint", action="append", default=[], help="one argument each")
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE, one each")
    parser.add_argument("--user", default="", help="the user the image runs as (uid[:gid])")
    parser.add_argument("--base", default="", help="an image archive whose layers go below")
    parser.add_argument(
        "--add-user", default="", metavar="NAME:UID", help="a user added to the base's /etc/passwd"
    )
    args = parser.parse_args()
    if not os.path.isdir(args.root):
        print(f"oci: {args.root}: not a folder; give the image's root folder", file=sys.stderr)
        return 2
    if args.add_user:
        name, _, uid = args.add_user.partition(":")
        if not (args.base and name and uid.isdigit()):
            print(f"oci: --add-user {args.add_user!r}: give NAME:UID, with --base", file=sys.stderr)
            return 2
        add_user(args.root, args.base, name, int(uid))
    env = args.env or ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]
    write_image(args.root, args.ref, args.entrypoint, env, args.user, args.dest, args.base)
    return 0


if __name__ == "__main__":
    sys.exit(main())
