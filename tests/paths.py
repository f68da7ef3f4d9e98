"""Where the tests' reference data lives: ``tests/data/``, inside the repository.

The files there are upstream files copied unedited (source, commit and licence in
``tests/data/README.md``); a fresh clone has everything the tests read.
"""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
#: compiled pipelines from the KFP project's own test data
PIPELINES = DATA / "kfp-pipelines"
#: the Kubeflow Pipelines REST API, v2beta1, as one Swagger 2.0 file
SWAGGER = DATA / "kfp_api_v2beta1.swagger.json"
#: KServe's InferenceService CustomResourceDefinition
KSERVE_CRD = DATA / "kserve_inferenceservices_crd.yaml"
