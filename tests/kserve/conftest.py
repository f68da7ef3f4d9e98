"""Fixtures of the InferenceService tests: KServe's CRD schema as a validator, and the loopback
Kubernetes API of recorded responses (``fake_kube``) with a ``Kube`` of its namespace."""

from __future__ import annotations

import jsonschema
import pytest
import yaml

from kfp_bench.kserve.kube import Kube
from tests.kserve.fake_kube import NS, FakeKube
from tests.paths import KSERVE_CRD as CRD


@pytest.fixture(scope="session")
def schema() -> jsonschema.protocols.Validator:
    """The CRD's v1beta1 openAPIV3Schema as a validator (the 2 MB file read once a session,
    with libyaml; the schema itself is the CRD's, so its meta-check is skipped)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    doc = yaml.load(CRD.read_text(), Loader=loader)  # noqa: S506 - a safe loader
    (version,) = [v for v in doc["spec"]["versions"] if v["name"] == "v1beta1"]
    return jsonschema.Draft4Validator(version["schema"]["openAPIV3Schema"])


@pytest.fixture(scope="module")
def fake():
    """The loopback Kubernetes API, one per test module (each plays its own scenarios)."""
    server = FakeKube()
    yield server
    server.close()


@pytest.fixture
def kube(fake) -> Kube:
    return Kube(NS, config_dict=fake.kube_config())
