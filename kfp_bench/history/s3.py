"""The results history on an S3-compatible store: AWS S3, MinIO, or SeaweedFS behind KFP.

``s3://BUCKET/PREFIX`` and ``minio://BUCKET/PREFIX`` (KFP's alias for its own store), both with
an optional ``?endpoint=URL&region=NAME`` as KFP's pipeline root takes them (gocloud's s3blob
URL). The endpoint is that query's, else boto3's own ``AWS_ENDPOINT_URL_S3``/``AWS_ENDPOINT_URL``;
for ``minio://`` with neither, KFP's in-cluster store (``KFP_ENDPOINTS``). A custom endpoint is
addressed path-style. Credentials: boto3's chain (``AWS_ACCESS_KEY_ID``...); for ``minio://``
first, and for ``s3://`` when that chain has none, KFP's ``mlpipeline-minio-artifact`` Secret as
the report step mounts it (``MINIO_SECRET_DIR``). ``write`` never replaces: a conditional put
(``If-None-Match: *``), then a read-back of what the store holds.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from kfp_bench.errors import ConfigError, HistoryError
from kfp_bench.names import s3_uri_problem
from kfp_bench.redact import scrub

# Imports inside functions: boto3 comes with the history extra, and only an s3:// or minio://
# history needs it.

#: Where the pipeline mounts KFP's Secret (keys accesskey, secretkey); $KFP_BENCH_MINIO_SECRET_DIR
#: moves it (tests).
MINIO_SECRET_DIR = "/var/run/secrets/kfp-bench-minio"
#: KFP's own store, as its driver reaches it (kubeflow/pipelines 7b70c7b95f backend/src/v2/config/
#: env.go:177 getDefaultMinioSessionInfo, http): the Service minio-service.kubeflow:9000 of the
#: backends up to 2.15 (Kubeflow 1.11, whose SeaweedFS serves it: kubeflow/manifests v1.11.0
#: applications/pipeline/upstream/third-party/seaweedfs/base/seaweedfs/minio-service.yaml), and
#: seaweedfs.kubeflow:9000 from 2.16 (objectstore/config.go:29, #12613 5ef18b95dc). The first
#: name that resolves is used.
KFP_ENDPOINTS = ("minio-service.kubeflow:9000", "seaweedfs.kubeflow:9000")
#: KFP's region for its store (env.go:181); SeaweedFS and MinIO sign with whatever is given.
DEFAULT_REGION = "us-east-1"


def parse(uri: str) -> tuple[str, str, dict[str, str]]:
    """``(bucket, prefix, options)`` of an s3:// or minio:// URI; ConfigError when malformed."""
    parts = urlsplit(uri)
    scheme, shown = parts.scheme, scrub(uri)
    if not parts.netloc:
        raise ConfigError(f"--results-uri {shown}: no bucket; give {scheme}://BUCKET/PREFIX")
    query = parse_qs(parts.query, keep_blank_values=True)
    unknown = sorted(set(query) - {"endpoint", "region"})
    if unknown or any(len(v) != 1 or not v[0] for v in query.values()):
        raise ConfigError(
            f"--results-uri {shown}: the query takes endpoint=URL and region=NAME, once each "
            f"(got {', '.join(unknown) or 'an empty or repeated one'})"
        )
    options = {k: v[0] for k, v in query.items()}
    if why := s3_uri_problem(parts.netloc, options):
        raise ConfigError(f"--results-uri {shown}: {why}")
    return parts.netloc, parts.path.strip("/"), options


def _endpoint(scheme: str, options: dict[str, str]) -> str | None:
    """The endpoint URL, or None for AWS's own."""
    url = (
        options.get("endpoint")
        or os.environ.get("AWS_ENDPOINT_URL_S3")
        or os.environ.get("AWS_ENDPOINT_URL")
    )
    if url or scheme != "minio":
        return url and (url if "://" in url else f"http://{url}")
    for hostport in KFP_ENDPOINTS:
        try:
            socket.getaddrinfo(hostport.partition(":")[0], None)
        except OSError:
            continue
        return f"http://{hostport}"
    return f"http://{KFP_ENDPOINTS[0]}"  # unreachable: the check names it and the fix


def _kfp_secret() -> tuple[str, str] | None:
    d = Path(os.environ.get("KFP_BENCH_MINIO_SECRET_DIR") or MINIO_SECRET_DIR)
    try:
        return (d / "accesskey").read_text().strip(), (d / "secretkey").read_text().strip()
    except OSError:
        return None


def _client(scheme: str, endpoint: str | None, region: str | None):
    import boto3
    from botocore.config import Config

    session = boto3.session.Session()
    keys = _kfp_secret() if scheme == "minio" or session.get_credentials() is None else None
    if keys and (scheme != "minio" or not os.environ.get("AWS_ACCESS_KEY_ID")):
        session = boto3.session.Session(aws_access_key_id=keys[0], aws_secret_access_key=keys[1])
    config = Config(
        s3={"addressing_style": "path" if endpoint else "auto"},
        retries={"mode": "standard", "max_attempts": 3},
        connect_timeout=10,
        read_timeout=60,
    )
    region = region or session.region_name or DEFAULT_REGION
    return session.client("s3", endpoint_url=endpoint, region_name=region, config=config)


class S3Store:
    """Objects ``BUCKET/PREFIX/KEY/NAME`` on an S3 API."""

    def __init__(self, uri: str):
        self.uri = scrub(uri)  # what messages and reports show; the store reads the URI given
        self.scheme = urlsplit(uri).scheme
        self.bucket, prefix, options = parse(uri)
        self.prefix = f"{prefix}/" if prefix else ""
        self.endpoint = _endpoint(self.scheme, options)
        self._s3 = _client(self.scheme, self.endpoint, options.get("region"))
        self._call("check", self._s3.list_objects_v2, Prefix=self.prefix, MaxKeys=1)

    def keys(self) -> dict[str, list[str]]:
        names, token = [], {}
        while True:
            page = self._call("list", self._s3.list_objects_v2, Prefix=self.prefix, **token)
            names += [obj["Key"] for obj in page.get("Contents", [])]
            if not page.get("IsTruncated"):
                return by_key(self.prefix, names)
            token = {"ContinuationToken": page["NextContinuationToken"]}

    def read(self, key: str, name: str) -> bytes:
        got = self._call(f"read {key}/{name}", self._s3.get_object, Key=self._key(key, name))
        if got is None:
            raise HistoryError(f"{self.uri}: no {key}/{name} in the results history")
        return got["Body"].read()

    def write(self, key: str, name: str, data: bytes) -> bool:
        """The conditional put is the guarantee (the server refuses an existing key: 412). The
        read-back catches a server that ignores the condition: a racing writer's bytes found
        there mean this write did not win (False), and archive reports the conflict."""
        what = f"write {key}/{name}"
        put = self._s3.put_object
        if self._call(what, put, Key=self._key(key, name), Body=data, IfNoneMatch="*") is None:
            return False
        return self.read(key, name) == data

    def _key(self, key: str, name: str) -> str:
        return f"{self.prefix}{key}/{name}"

    def _call(self, what: str, method, **kwargs):
        """``method(Bucket=..., **kwargs)``; None for a missing object or a refused condition;
        every other failure a HistoryError naming the URI and the fix (never a secret)."""
        from botocore import exceptions as bexc

        try:
            return method(Bucket=self.bucket, **kwargs)
        except bexc.NoCredentialsError:
            raise HistoryError(f"--results-uri {self.uri}: no S3 credentials; {_CREDS}") from None
        except (bexc.EndpointConnectionError, bexc.ConnectTimeoutError) as exc:
            raise HistoryError(
                f"--results-uri {self.uri}: cannot reach the S3 endpoint "
                f"{scrub(self.endpoint or 'of AWS')} ({scrub(str(exc))}); give the store's "
                "address as ?endpoint=http://HOST:PORT or in AWS_ENDPOINT_URL, and check the "
                "network"
            ) from None
        except bexc.ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if code in ("NoSuchKey", "PreconditionFailed", "ConditionalRequestConflict") or (
                code == "404" and what != "check"
            ):
                return None
            raise HistoryError(scrub(self._explain(what, code, status, exc))) from None
        except bexc.BotoCoreError as exc:
            raise HistoryError(scrub(f"--results-uri {self.uri}: cannot {what} ({exc})")) from None

    def _explain(self, what: str, code: str, status, exc) -> str:
        at = f"--results-uri {self.uri}"
        where = f" at {self.endpoint}" if self.endpoint else ""
        if code == "NoSuchBucket":
            url = f" --endpoint-url {self.endpoint}" if self.endpoint else ""
            return (
                f"{at}: bucket {self.bucket} does not exist{where}; create it "
                f"(aws s3 mb s3://{self.bucket}{url}) or fix the URI"
            )
        if code in ("InvalidAccessKeyId", "SignatureDoesNotMatch"):
            return f"{at}: the S3 credentials are refused ({code}); {_CREDS}"
        if code == "AccessDenied" or status == 403:
            if what in ("check", "list"):  # ListObjectsV2: s3:ListBucket on the bucket itself
                return (
                    f"{at}: access denied (AccessDenied) listing {self.prefix or '/'}; grant the "
                    f"credentials s3:ListBucket on arn:aws:s3:::{self.bucket} for the prefix "
                    f"{self.prefix}* (a profile's key on multi-user Kubeflow may put and get "
                    "under mlpipeline/private/NAMESPACE/ but not list: docs/running-in-a-cluster.md"
                    ", The results history)"
                )
            return (
                f"{at}: access denied (AccessDenied) to {what}; grant the credentials "
                f"s3:GetObject and s3:PutObject on arn:aws:s3:::{self.bucket}/{self.prefix}*"
            )
        return f"{at}: cannot {what} ({exc})"


_CREDS = (
    "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or an AWS profile or role); in a KFP "
    "pod the report step reads KFP's mlpipeline-minio-artifact Secret, which must exist in the "
    "run's namespace"
)


def by_key(prefix: str, names) -> dict[str, list[str]]:
    """Object ``names`` under ``prefix`` as ``Store.keys`` gives them: ``KEY/NAME`` only."""
    out: dict[str, list[str]] = {}
    for full in names:
        key, _, name = full[len(prefix) :].partition("/")
        if key and name and "/" not in name:
            out.setdefault(key, []).append(name)
    return {k: sorted(v) for k, v in sorted(out.items())}
