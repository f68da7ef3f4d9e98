"""Fixtures of the InferenceService tests: KServe's CRD schema as a validator."""

from __future__ import annotations

import jsonschema
import pytest
import yaml

from tests.paths import KSERVE_CRD as CRD


@pytest.fixture(scope="session")
def schema() -> jsonschema.protocols.Validator:
    """The CRD's v1beta1 openAPIV3Schema as a validator (the 2 MB file read once a session,
    with libyaml; the schema itself is the CRD's, so its meta-check is skipped)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    doc = yaml.load(CRD.read_text(), Loader=loader)  # noqa: S506 - a safe loader
    (version,) = [v for v in doc["spec"]["versions"] if v["name"] == "v1beta1"]
    return jsonschema.Draft4Validator(version["schema"]["openAPIV3Schema"])
