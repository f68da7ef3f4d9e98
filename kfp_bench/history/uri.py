"""Where past results live: a local folder, a GCS or an S3 prefix, behind one small interface.

``open_store(uri)`` takes ``gs://BUCKET/PREFIX``, ``s3://`` or ``minio://BUCKET/PREFIX`` (the S3
store is ``kfp_bench.history.s3``), ``file:///PATH`` or a plain path and returns a ``Store``:
named byte blobs under keys (``KEY/NAME``). ``write`` never replaces anything: the local store
links a finished temporary file into place (``os.link`` fails on an existing name), the GCS store
uploads with ``if_generation_match=0`` and the S3 store with ``If-None-Match: *`` (the server
refuses when the object exists). So two benchmarks writing at once, or a report rebuilt twice,
can never clobber a stored result.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Protocol
from urllib.parse import unquote, urlparse

from kfp_bench.errors import ConfigError, HistoryError
from kfp_bench.history.s3 import S3Store, by_key
from kfp_bench.redact import scrub

# Imports inside functions: boto3 and google-cloud-storage come with the history extra, and only a
# history of their scheme needs them.


class Store(Protocol):
    """Byte blobs under ``KEY/NAME``; written once, never replaced."""

    uri: str

    def keys(self) -> dict[str, list[str]]:
        """Every key, with the names stored under it."""

    def read(self, key: str, name: str) -> bytes:
        """The blob ``KEY/NAME``; ``HistoryError`` when it does not exist."""

    def write(self, key: str, name: str, data: bytes) -> bool:
        """Store ``KEY/NAME`` unless it exists; True when written, False when it was there."""


#: Where each store's client reads its credentials.
_S3_KEYS = "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
_CREDENTIALS = {"s3": _S3_KEYS, "minio": _S3_KEYS, "gs": "GOOGLE_APPLICATION_CREDENTIALS"}


def local_root(uri: str) -> Path | None:
    """The folder of a local history (file:///PATH or a path; ``open_store`` checks the form),
    or None for a bucket's."""
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return Path(unquote(parsed.path))
    return Path(uri) if len(parsed.scheme) <= 1 else None  # one letter: a Windows drive


def open_store(uri: str) -> Store:
    """The store at ``uri``: gs://, s3:// or minio://BUCKET/PREFIX, file:///PATH or a local path."""
    if not uri:
        raise ConfigError(
            "--results-uri is empty; give gs://, s3:// or minio://BUCKET/PREFIX or a local folder"
        )
    parsed, shown = urlparse(uri), scrub(uri)
    if parsed.scheme in _CREDENTIALS and "@" in parsed.netloc:  # the bucket is the netloc
        raise ConfigError(
            f"--results-uri {shown}: credentials in the URI are not used; give "
            f"{parsed.scheme}://BUCKET/PREFIX and the credentials in {_CREDENTIALS[parsed.scheme]}"
        )
    if parsed.scheme in ("s3", "minio"):
        return S3Store(uri)
    if parsed.scheme == "gs":
        if not parsed.netloc:
            raise ConfigError(f"--results-uri {shown}: no bucket; give gs://BUCKET/PREFIX")
        return GcsStore(shown, parsed.netloc, parsed.path.strip("/"))
    if parsed.scheme == "file":
        if parsed.netloc not in ("", "localhost"):
            raise ConfigError(f"--results-uri {shown}: a file:// URI takes no host; file:///PATH")
        return LocalStore(uri, local_root(uri))
    if parsed.scheme and len(parsed.scheme) > 1:
        raise ConfigError(
            f"--results-uri {shown}: scheme {parsed.scheme}:// is not supported; "
            "give gs://, s3:// or minio://BUCKET/PREFIX, file:///PATH or a local folder"
        )
    return LocalStore(uri, Path(uri))


class LocalStore:
    """A folder: ``ROOT/KEY/NAME`` files."""

    def __init__(self, uri: str, root: Path):
        self.uri, self.root = uri, root
        if root.exists() and not root.is_dir():
            raise ConfigError(f"--results-uri {uri}: {root} is a file; give a folder")

    def keys(self) -> dict[str, list[str]]:
        if not self.root.is_dir():
            return {}
        return {
            d.name: sorted(f.name for f in d.iterdir() if f.is_file() and f.name[0] != ".")
            for d in sorted(self.root.iterdir())
            if d.is_dir() and d.name[0] != "."
        }

    def read(self, key: str, name: str) -> bytes:
        try:
            return (self.root / key / name).read_bytes()
        except FileNotFoundError:
            raise HistoryError(f"{self.uri}: no {key}/{name} in the results history") from None
        except OSError as exc:
            raise HistoryError(f"{self.uri}: cannot read {key}/{name} ({exc})") from None

    def write(self, key: str, name: str, data: bytes) -> bool:
        d = self.root / key
        try:
            d.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=d)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                os.link(tmp, d / name)
            except FileExistsError:
                return False
            finally:
                os.unlink(tmp)
        except OSError as exc:
            raise HistoryError(
                f"{self.uri}: cannot write {key}/{name} ({exc}); check the folder's permissions"
            ) from None
        return True


class GcsStore:
    """A GCS prefix: objects ``gs://BUCKET/PREFIX/KEY/NAME``."""

    def __init__(self, uri: str, bucket: str, prefix: str):
        self.uri = uri
        self.prefix = f"{prefix}/" if prefix else ""
        self._bucket = _client(uri).bucket(bucket)
        self._check()

    def _check(self) -> None:
        from google.api_core import exceptions as gexc

        try:
            next(iter(self._bucket.list_blobs(prefix=self.prefix, max_results=1)), None)
        except gexc.NotFound:
            raise HistoryError(
                f"--results-uri {self.uri}: bucket {self._bucket.name} does not exist; create it "
                f"(gcloud storage buckets create gs://{self._bucket.name}) or fix the URI"
            ) from None
        except gexc.Forbidden as exc:
            raise HistoryError(
                f"--results-uri {self.uri}: access denied ({exc.message}); grant the "
                "credentials storage.objects.list and storage.objects.create on the bucket"
            ) from None
        except gexc.GoogleAPICallError as exc:
            raise HistoryError(f"--results-uri {self.uri}: {exc}") from None

    def keys(self) -> dict[str, list[str]]:
        return by_key(
            self.prefix, (blob.name for blob in self._bucket.list_blobs(prefix=self.prefix))
        )

    def read(self, key: str, name: str) -> bytes:
        from google.api_core import exceptions as gexc

        try:
            return self._bucket.blob(f"{self.prefix}{key}/{name}").download_as_bytes()
        except gexc.NotFound:
            raise HistoryError(f"{self.uri}: no {key}/{name} in the results history") from None
        except gexc.GoogleAPICallError as exc:
            raise HistoryError(f"{self.uri}: cannot read {key}/{name} ({exc})") from None

    def write(self, key: str, name: str, data: bytes) -> bool:
        from google.api_core import exceptions as gexc

        blob = self._bucket.blob(f"{self.prefix}{key}/{name}")
        try:
            # The precondition is the guarantee (GCS refuses atomically). The lookup first only
            # keeps emulators that ignore preconditions (the tests' gcp-storage-emulator) from
            # overwriting; there, two writers racing between it and the upload could both write.
            if blob.exists():
                return False
            blob.upload_from_string(data, if_generation_match=0)
        except gexc.PreconditionFailed:
            return False
        except gexc.GoogleAPICallError as exc:
            raise HistoryError(f"{self.uri}: cannot write {key}/{name} ({exc})") from None
        return True


def _client(uri: str):
    """Application Default Credentials; with ``STORAGE_EMULATOR_HOST`` (tests, a local
    emulator), anonymous ones and the project ``GOOGLE_CLOUD_PROJECT`` (default "kfp-bench")."""
    from google.auth.exceptions import DefaultCredentialsError
    from google.cloud import storage

    if os.environ.get("STORAGE_EMULATOR_HOST"):
        from google.auth.credentials import AnonymousCredentials

        project = os.environ.get("GOOGLE_CLOUD_PROJECT", "kfp-bench")
        return storage.Client(project=project, credentials=AnonymousCredentials())
    try:
        return storage.Client()
    except DefaultCredentialsError:
        raise HistoryError(
            f"--results-uri {uri}: no Google Cloud credentials; set "
            "GOOGLE_APPLICATION_CREDENTIALS to a service-account key, run "
            "`gcloud auth application-default login`, or run where workload identity is set up"
        ) from None
