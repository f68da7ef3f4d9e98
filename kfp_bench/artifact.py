"""The steps' artifact: kfp-bench's wheel, built reproducibly, and the sha256 that pins it.

Every step of the compiled pipeline installs kfp-bench from a direct reference checked by its
sha256 (``kfp_bench/components/_step.py``), never by a name and version that any index could serve.
The pinned file is this module's ``build()``: the package's modules and data (the layout of
pyproject.toml) in a zip with fixed entry order, times and modes, and metadata normalised from
the project's, so that the same sources give the same bytes on any machine, from a checkout or
from an installed kfp-bench. ``compiled/kfp_bench.yaml`` is left out: it carries the pin, so it
cannot be inside what it pins (the laptop's package has it; no step reads it).
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import importlib.util
import io
import re
import sys
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

from kfp_bench import __version__
from kfp_bench.errors import ConfigError

# Imports inside functions: packaging is no dependency of kfp-bench itself (kfp-bench depends on
# nothing; an extra brings it, as pip does).

NAME = "kfp-bench"
#: The packages of the wheel, as pyproject.toml's [tool.setuptools] lists them (a test checks).
PACKAGES = (
    "kfp_bench",
    "kfp_bench.cli",
    "kfp_bench.history",
    "kfp_bench.kfp",
    "kfp_bench.kserve",
    "kfp_bench.steps",
    "kfp_bench.load",
    "kfp_bench.metrics",
    "kfp_bench.report",
    "kfp_bench.sandbox",
    "kfp_bench.sandbox.kfp_server",
    "kfp_bench.stats",
    "kfp_bench.schemas",
    "kfp_bench.components",
    "kfp_bench.pipelines",
    "kfp_bench.compiled",
)
#: Package data beside the modules: (package, file pattern).
DATA = (
    ("kfp_bench", "py.typed"),
    ("kfp_bench.compiled", "*.yaml"),
    ("kfp_bench.metrics", "*.yaml"),
    ("kfp_bench.schemas", "*.json"),
)
#: The compiled meta-pipelines hold the artifact's pin, so they are not in the artifact (the
#: steps read only the child pipelines; a test checks that these are all the pinning files).
LEFT_OUT = ("kfp_bench/compiled/kfp_bench.yaml", "kfp_bench/compiled/kfp_bench_mesh.yaml")
_WHEEL = (
    "Wheel-Version: 1.0\nGenerator: kfp-bench.artifact\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
)
#: Zip entry times are fixed (the zip format's earliest), as are modes: the bytes depend on
#: the content only.
_EPOCH = (1980, 1, 1, 0, 0, 0)


@dataclass(frozen=True)
class Artifact:
    """A built wheel: its file name, bytes and sha256 (hex)."""

    filename: str
    data: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    def write(self, folder: str | Path) -> Path:
        """Write the wheel into ``folder`` (created when missing); return its path."""
        path = Path(folder) / self.filename
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.data)
        return path


def project_root() -> Path | None:
    """The checkout kfp-bench runs from (an editable install), or None for an installed wheel."""
    root = Path(__file__).resolve().parent.parent
    return root if (root / "pyproject.toml").is_file() and (root / "compiled").is_dir() else None


def filename(version: str = __version__) -> str:
    return f"kfp_bench-{version}-py3-none-any.whl"


def build(project: str | Path | None = None) -> Artifact:
    """The artifact of the checkout ``project``, or of the running kfp-bench when None (its
    checkout when it runs from one, else the installed package).

    Raises:
        ConfigError: a checkout without the files pyproject.toml names.
    """
    if project is None:
        project = project_root()
    if project is not None:
        dirs, meta = _checkout(Path(project))
    else:
        dirs, meta = _installed()
    files = {}
    for pkg, folder in dirs.items():
        arc = pkg.replace(".", "/")
        patterns = ["*.py", *(p for name, p in DATA if name == pkg)]
        for pattern in patterns:
            for path in folder.glob(pattern):
                if path.is_file() and f"{arc}/{path.name}" not in LEFT_OUT:
                    files[f"{arc}/{path.name}"] = path.read_bytes()
    return Artifact(filename(meta["version"]), _zip(files, meta))


def _checkout(root: Path) -> tuple[dict[str, Path], dict]:
    try:
        project = tomllib.loads((root / "pyproject.toml").read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{root}: not a kfp-bench checkout ({exc})") from None
    dirs = {}
    for pkg in project["tool"]["setuptools"]["packages"]:
        folder = root / pkg.replace(".", "/")
        if not (folder / "__init__.py").is_file():
            raise ConfigError(f"{root}: package {pkg} has no {folder}/__init__.py")
        dirs[pkg] = folder
    version = _version(root / "kfp_bench" / "__init__.py")
    extras = project["project"].get("optional-dependencies", {})
    requires = [f'{req}; extra == "{extra}"' for extra, reqs in extras.items() for req in reqs]
    meta = dict(
        version=version,
        requires_python=project["project"].get("requires-python", ""),
        extras=list(extras),
        requires=requires,
        scripts=project["project"].get("scripts", {}),
    )
    return dirs, meta


def _installed() -> tuple[dict[str, Path], dict]:
    dirs = {}
    for pkg in PACKAGES:
        spec = importlib.util.find_spec(pkg)
        dirs[pkg] = Path(list(spec.submodule_search_locations)[0])
    dist = importlib.metadata.distribution(NAME)
    meta = dict(
        version=dist.version,
        requires_python=dist.metadata.get("Requires-Python", ""),
        extras=dist.metadata.get_all("Provides-Extra") or [],
        requires=dist.requires or [],
        scripts={e.name: e.value for e in dist.entry_points if e.group == "console_scripts"},
    )
    return dirs, meta


def _version(init: Path) -> str:
    for line in init.read_text().splitlines():
        if line.startswith("__version__ = "):
            return line.split("=", 1)[1].strip().strip("\"'")
    raise ConfigError(f"{init}: no __version__")


def _metadata(meta: dict) -> str:
    """METADATA in one normal form whatever wrote the project's (pyproject.toml or an installed
    dist's): names canonical, extras and requirements sorted."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    def norm(text: str) -> str:
        req = Requirement(text)
        extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
        marker = f"; {req.marker}" if req.marker else ""
        return f"{canonicalize_name(req.name)}{extras}{req.specifier}{marker}"

    lines = ["Metadata-Version: 2.1", f"Name: {NAME}", f"Version: {meta['version']}"]
    if meta["requires_python"]:
        lines.append(f"Requires-Python: {meta['requires_python']}")
    lines += [f"Provides-Extra: {e}" for e in sorted(canonicalize_name(e) for e in meta["extras"])]
    lines += [f"Requires-Dist: {r}" for r in sorted(norm(r) for r in meta["requires"])]
    return "\n".join(lines) + "\n"


def _zip(files: dict[str, bytes], meta: dict) -> bytes:
    info = f"kfp_bench-{meta['version']}.dist-info"
    scripts = "".join(f"{k} = {v}\n" for k, v in sorted(meta["scripts"].items()))
    files = dict(files)
    files[f"{info}/METADATA"] = _metadata(meta).encode()
    files[f"{info}/WHEEL"] = _WHEEL.encode()
    files[f"{info}/top_level.txt"] = b"kfp_bench\n"
    if scripts:
        files[f"{info}/entry_points.txt"] = f"[console_scripts]\n{scripts}".encode()
    record = "".join(
        f"{name},{_record_hash(data)},{len(data)}\n" for name, data in sorted(files.items())
    )
    files[f"{info}/RECORD"] = (record + f"{info}/RECORD,,\n").encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        # the dist-info last, as the wheel format recommends
        for name in sorted(files, key=lambda n: (n.startswith(info), n)):
            entry = zipfile.ZipInfo(name, date_time=_EPOCH)
            entry.create_system = 3  # unix, so that the mode below is read
            entry.external_attr = 0o100644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(entry, files[name], compresslevel=9)
    return out.getvalue()


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return f"sha256={digest.decode()}"


#: The size the API server allows a ConfigMap (etcd's object limit, k8s.io/api core/v1
#: ``MaxSecretSize``, applied to ConfigMaps by apis/core/validation ValidateConfigMap).
MAX_CONFIG_MAP = 1024 * 1024


def config_map(art: Artifact, namespace: str, name: str) -> dict:
    """The ConfigMap ``name`` that carries ``art`` into ``namespace``: one key, the wheel's file
    name, so that its volume holds the file the steps install. Immutable: once written, nobody
    can change the wheel under the same name (a different one needs a delete first).

    Raises:
        ConfigError: the wheel is too large for a ConfigMap.
    """
    if len(art.data) > MAX_CONFIG_MAP:
        raise ConfigError(
            f"kfp-bench's wheel is {len(art.data)} bytes, over a ConfigMap's {MAX_CONFIG_MAP}: "
            "use image mode (kfp-bench compile --image) or --wheel-url"
        )
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {
                "app.kubernetes.io/name": NAME,
                "app.kubernetes.io/component": "wheel",
                "app.kubernetes.io/version": art.filename.split("-")[1],
            },
            "annotations": {"kfp-bench/sha256": art.sha256},
        },
        "immutable": True,
        "binaryData": {art.filename: base64.b64encode(art.data).decode()},
    }


def held_sha256(obj: dict) -> str:
    """The sha256 of the wheel a ConfigMap holds ("" when it holds none)."""
    data = (obj.get("binaryData") or {}).values()
    return hashlib.sha256(base64.b64decode(next(iter(data)))).hexdigest() if data else ""


def install(kube, art: Artifact, name: str) -> str:
    """Put ``art`` into the ConfigMap ``name`` of ``kube``'s namespace (``kfp_bench.kserve.kube.
    Kube``); return "created", or "present" when the same wheel is there already.

    Raises:
        ConfigError: a ConfigMap of that name holds another wheel (nothing was changed).
        KubeError: the API refused or could not be reached.
    """
    if kube.create_config_map(config_map(art, kube.namespace, name)) is not None:
        return "created"
    found = kube.get_config_map(name)
    held = held_sha256(found) if found else ""
    if held == art.sha256:
        return "present"
    raise ConfigError(
        f"ConfigMap {name} in namespace {kube.namespace} holds another wheel (sha256 "
        f"{held or 'none'}, not {art.sha256}); nothing was changed: delete it (kubectl delete "
        f"configmap {name} -n {kube.namespace}) and run kfp-bench install again"
    )


def pins(compiled_yaml: str | Path) -> set[str]:
    """The sha256 pins of kfp-bench's wheel in a compiled pipeline (none in image mode)."""
    return set(re.findall(r"#sha256=([0-9a-f]{64})", Path(compiled_yaml).read_text()))


def main(argv: list[str] | None = None) -> int:
    """``python -m kfp_bench.artifact DIR``: write the steps' wheel into DIR and print its path
    and sha256 (the release workflow attaches it and compiles the YAML pinned to it)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m kfp_bench.artifact DIR", file=sys.stderr)
        return 2
    art = build()
    print(f"{art.write(args[0])} {art.sha256}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
