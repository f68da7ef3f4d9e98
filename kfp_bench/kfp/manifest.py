"""A pipeline manifest: read from a file, an http(s) URL or gs://, and checked as a pipeline spec.

``load_manifest`` reads the bytes on the client side and parses them as KFP's compiled YAML: a
``PipelineSpec`` document, optionally followed by a ``PlatformSpec`` one. The check is the
protobuf parser's own (``json_format.ParseDict``), so a manifest is refused for exactly the fields
KFP's server would refuse, before anything is created. ``Manifest.check_params`` checks run
parameters against the root's declared inputs.

Every failure is a ``ConfigError`` naming the source and the fix. storage.cloud.google.com
addresses deserve a word: KFP's benchmark guide warns that they redirect to a Google sign-in page,
so a fetched "manifest" is HTML. Redirects are followed (up to urllib's 10, loops detected), and
when what comes back is not a pipeline the message names the redirect and the addresses to use.
"""

from __future__ import annotations

import os
import socket
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import yaml

from kfp_bench.errors import ConfigError
from kfp_bench.redact import scrub

# Imports inside functions: kfp-pipeline-spec (the kfp extra) and google-cloud-storage (the history
# extra), each only where a manifest needs it; kfp-bench itself depends on nothing.

#: libyaml's parser where PyYAML's wheel has it (the platforms its wheels are built for), the
#: same documents about ten times faster than the pure-Python one; a compiled pipeline is
#: thousands of lines.
YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: KFP's upload limit; a bigger "manifest" is not one.
MAX_BYTES = 32 << 20
_GCS_HINT = (
    "storage.cloud.google.com addresses redirect to a Google sign-in page: use "
    "gs://BUCKET/OBJECT or https://storage.googleapis.com/BUCKET/OBJECT"
)
_COMPILE = "give a pipeline compiled with kfp.compiler.Compiler().compile(...)"
#: parameterType of the pipeline spec -> the JSON types a value of it may have.
_PARAM_TYPES = {
    "STRING": (str,),
    "NUMBER_INTEGER": (int,),
    "NUMBER_DOUBLE": (int, float),
    "BOOLEAN": (bool,),
    "LIST": (list,),
    "STRUCT": (dict,),
}


@dataclass(frozen=True, slots=True)
class Param:
    """One input parameter the pipeline's root declares."""

    name: str
    type: str
    optional: bool


@dataclass(frozen=True, slots=True)
class Manifest:
    """A manifest that parsed as a pipeline spec.

    Attributes:
        source: where it came from, as the user gave it.
        data: its bytes, as they will be uploaded.
        name: the pipeline's ``pipelineInfo.name``.
        params: the root's input parameters by name.
        redirects: the URLs a fetch was redirected through, in order.
    """

    source: str
    data: bytes = field(repr=False)
    name: str
    params: dict
    redirects: tuple[str, ...] = ()

    def check_params(self, values: dict) -> dict:
        """Return ``values`` if the pipeline declares each one with a fitting type and none it
        requires is missing; raise ``ConfigError`` naming the parameter otherwise."""
        unknown = sorted(set(values) - set(self.params))
        if unknown:
            declared = ", ".join(sorted(self.params)) or "none"
            raise ConfigError(
                f"--params: {', '.join(unknown)} not declared by pipeline {self.name!r} "
                f"(it declares: {declared}); remove or rename them"
            )
        for name, value in values.items():
            p = self.params[name]
            ok_types = _PARAM_TYPES.get(p.type)
            # bool is an int in Python; a JSON true is no integer parameter.
            wrong = ok_types and (
                not isinstance(value, ok_types)
                or (isinstance(value, bool) and bool not in ok_types)
            )
            if wrong:
                raise ConfigError(
                    f"--params: {name}={value!r} does not fit its declared type {p.type}; "
                    f"give a JSON {'/'.join(t.__name__ for t in ok_types)}"
                )
        missing = sorted(n for n, p in self.params.items() if not p.optional and n not in values)
        if missing:
            raise ConfigError(
                f"--params: pipeline {self.name!r} requires {', '.join(missing)}; "
                f"""give them, e.g. --params '{{"{missing[0]}": ...}}'"""
            )
        return values

    def write_to(self, directory: str | os.PathLike) -> Path:
        """Write the bytes to a .yaml file (KFP's upload accepts .yaml/.yml/.json/.zip/.tar.gz
        names only) and return its path."""
        path = Path(directory) / f"{_safe(self.name)}.yaml"
        path.write_bytes(self.data)
        return path


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in name)[:100] or "pipeline"


def load_manifest(source: str, *, timeout: float = 30.0) -> Manifest:
    """Read ``source`` (a path, http(s):// URL or gs://BUCKET/OBJECT) and check it is a pipeline
    spec. Raises ``ConfigError`` naming the source and the fix."""
    scheme = urlsplit(source).scheme.lower()
    redirects: tuple[str, ...] = ()
    if scheme in ("http", "https", "gs"):
        if scheme == "gs":
            data = _fetch_gs(source, timeout)
        else:
            data, redirects = _fetch_http(source, timeout)
        if len(data) > MAX_BYTES:
            raise ConfigError(f"{_flag(source)}: more than 32 MB, above KFP's upload limit")
    elif scheme in ("", "file") or len(scheme) == 1:  # a Windows drive letter is a path
        data = _read_file(source[7:] if scheme == "file" else source)
    else:
        raise ConfigError(
            f"--pipeline {scrub(source)!r}: unknown scheme {scheme!r}; give a file, http(s):// or gs://"
        )
    return parse_manifest(data, source, redirects)


def parse_manifest(data: bytes, source: str = "manifest", redirects=()) -> Manifest:
    """Check ``data`` as compiled KFP YAML and return the ``Manifest``."""
    flag = _flag(source)
    hint = ""
    if redirects:
        hint = f" (fetched after a redirect to {redirects[-1]})"
        if any(urlsplit(u).hostname == "storage.cloud.google.com" for u in (source, *redirects)):
            hint += "; " + _GCS_HINT
    try:
        docs = [d for d in yaml.load_all(data, Loader=YAML_LOADER) if d is not None]
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" at line {where.line + 1}" if where else ""
        raise ConfigError(f"{flag}: not YAML{at}{hint}; {_COMPILE}") from None
    if not docs or not isinstance(docs[0], dict):
        raise ConfigError(f"{flag}: not a pipeline spec (no YAML mapping){hint}; {_COMPILE}")
    spec, type_names = _parse_spec(docs[0], source, hint)
    params = {
        name: Param(
            name,
            type_names.get(p.parameter_type, "UNSPECIFIED"),
            bool(p.is_optional or p.HasField("default_value")),
        )
        for name, p in spec.root.input_definitions.parameters.items()
    }
    return Manifest(source, data, spec.pipeline_info.name, params, tuple(redirects))


def _parse_spec(doc: dict, source: str, hint: str):
    # Imported here: protobuf and the generated module cost ~0.3 s, needed only to load a manifest.
    from google.protobuf import json_format
    from kfp.pipeline_spec import pipeline_spec_pb2

    flag = _flag(source)
    missing = [k for k in ("pipelineInfo", "root") if k not in doc]
    if missing:
        what = "a v1 component, not a pipeline" if "implementation" in doc else "not a pipeline"
        raise ConfigError(f"{flag}: {what} spec (no {' or '.join(missing)}){hint}; {_COMPILE}")
    try:
        spec = json_format.ParseDict(doc, pipeline_spec_pb2.PipelineSpec())
    except json_format.ParseError as exc:
        first = str(exc).splitlines()[0]
        raise ConfigError(
            f"{flag}: not a valid pipeline spec ({first}){hint}; recompile it with kfp.compiler"
        ) from None
    names = {v: k for k, v in pipeline_spec_pb2.ParameterType.ParameterTypeEnum.items()}
    return spec, names


def _flag(source: str) -> str:
    """The flag and its value, as a message names it: no URL's userinfo (``kfp_bench.redact``)."""
    return f"--pipeline {scrub(source)}"


def _read_file(path: str) -> bytes:
    p = Path(path).expanduser()
    try:
        size = p.stat().st_size
        if size > MAX_BYTES:
            raise ConfigError(f"--pipeline {path}: {size} bytes, above KFP's 32 MB upload limit")
        return p.read_bytes()
    except FileNotFoundError:
        raise ConfigError(
            f"--pipeline {path}: no such file; give a compiled pipeline YAML"
        ) from None
    except IsADirectoryError:
        raise ConfigError(
            f"--pipeline {path}: a directory; give a compiled pipeline YAML"
        ) from None
    except OSError as exc:
        raise ConfigError(f"--pipeline {path}: cannot read it ({exc.strerror})") from None


class _Redirects(urllib.request.HTTPRedirectHandler):
    """urllib's redirect handling (10 hops, loop detection), remembering where it went."""

    def __init__(self):
        self.chain: list[str] = []

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        self.chain.append(newurl)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _fetch_http(url: str, timeout: float) -> tuple[bytes, tuple[str, ...]]:
    flag = _flag(url)
    redirects = _Redirects()
    opener = urllib.request.build_opener(redirects)
    req = urllib.request.Request(url, headers={"User-Agent": "kfp-bench"})
    gcs = urlsplit(url).hostname == "storage.cloud.google.com"
    try:
        with opener.open(req, timeout=timeout) as resp:
            data = resp.read(MAX_BYTES + 1)
    except urllib.error.HTTPError as exc:
        if 300 <= exc.code < 400:
            via = " -> ".join(map(scrub, redirects.chain[-4:]))
            raise ConfigError(
                f"{flag}: redirects in a loop (or more than 10 times: {via}); "
                "give the final address of the manifest"
            ) from None
        hint = "; " + _GCS_HINT if gcs else "; check the URL"
        if exc.code in (401, 403):
            hint = (
                "; the server wants credentials: download the file and pass its path, or use gs://"
            )
        raise ConfigError(f"{flag}: HTTP {exc.code} {exc.reason}{hint}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, socket.timeout | TimeoutError):
            reason = f"no answer in {timeout:g}s"
        raise ConfigError(
            f"{flag}: cannot reach it ({reason}); check the address and the network"
        ) from None
    return data, tuple(redirects.chain)


def _fetch_gs(url: str, timeout: float) -> bytes:
    flag = _flag(url)
    parts = urlsplit(url)
    bucket, name = parts.netloc, parts.path.lstrip("/")
    if not bucket or not name:
        raise ConfigError(f"{flag}: give gs://BUCKET/OBJECT")
    try:
        from google.api_core import exceptions as gexc
        from google.auth.exceptions import DefaultCredentialsError
        from google.cloud import storage
    except ImportError:  # pragma: no cover - a declared dependency
        raise ConfigError(
            f"{flag}: gs:// needs google-cloud-storage; pip install google-cloud-storage"
        ) from None
    try:
        client = storage.Client()
    except (DefaultCredentialsError, OSError):
        # No application-default credentials: a public object is still readable anonymously.
        client = storage.Client.create_anonymous_client()
    try:
        blob = client.bucket(bucket).blob(name)
        data = blob.download_as_bytes(timeout=timeout)
    except gexc.NotFound:
        raise ConfigError(f"{flag}: no such object; check the bucket and path") from None
    except (gexc.Forbidden, gexc.Unauthorized) as exc:
        raise ConfigError(
            f"{flag}: access denied ({exc.code}); sign in with "
            "`gcloud auth application-default login` or set GOOGLE_APPLICATION_CREDENTIALS"
        ) from None
    except gexc.GoogleAPIError as exc:
        raise ConfigError(f"{flag}: cannot download it ({exc})") from None
    except Exception as exc:  # transport errors of requests/google-auth have no common base
        raise ConfigError(
            f"{flag}: cannot reach Cloud Storage ({type(exc).__name__}: {exc})"
        ) from None
    return data
