"""The compiled pipelines (``kfp-bench compile``); the checkout's compiled/ links here.

The YAML files here are generated, never edited by hand: the kfp_bench pipeline that users upload
or ``kfp-bench submit`` starts, and the bundled child pipelines that the runs benchmark uploads.
"""
