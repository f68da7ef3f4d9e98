"""The KFP release the local API imitates: what its healthz reports, and the source it follows.

The info.version of the API's swagger (tests/data/kfp_api_v2beta1.swagger.json) and the
kubeflow/pipelines commit it was taken from. Its own module so that the server's options
(``server.py``) and its routes (``app.py``) both read it, and neither imports the other for it.
"""

KFP_RELEASE = "2.17.0"
KFP_COMMIT = "7b70c7b95f6832772efd6fd0029a4024491a0f44"
