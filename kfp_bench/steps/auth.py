"""The KFP API's credentials inside a pipeline pod: the projected service-account token of
multi-user KFP, else the token of the mounted token_secret Secret, else none."""

from __future__ import annotations

import os
from pathlib import Path

from kfp_bench.kfp.auth import Auth, sa_token_path
from kfp_bench.kfp.incluster import step_auth

#: Where a component finds a mounted API token (the Secret of kfp_bench's token_secret).
TOKEN_DIR = "/var/run/secrets/kfp-bench"


def token_auth(namespace: str = "", host: str = "", secret: str = "kfp-bench-token"):
    """The driver's auth inside a pipeline pod: the projected service-account token (multi-user
    KFP), else the token of the mounted Secret ``secret``, else none.

    With ``host``, ``kfp_bench.kfp.incluster.step_auth`` asks the API: an empty namespace
    becomes the pod's own when it is multi-user KFP (printed; ``ConfigError`` when the pod has
    none), and a projected token it refuses gives way to the Secret's. Without, no call is made.
    """
    token = Path(token_dir()) / "token"
    if host:
        return step_auth(host, namespace, str(token), secret)
    if Path(sa_token_path()).exists() or not token.exists():
        return Auth("auto", "", namespace)
    return Auth("token-file", str(token), namespace, source=f"Secret {secret}")


def token_dir() -> str:
    """Where the Secret's token is mounted: ``TOKEN_DIR``, moved by $KFP_BENCH_TOKEN_DIR (tests
    simulate a pod with it)."""
    return os.environ.get("KFP_BENCH_TOKEN_DIR") or TOKEN_DIR
