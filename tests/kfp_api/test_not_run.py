"""Collects the skipped rows of not_run.py: one pytest item per Go case not run here."""

from tests.kfp_api.not_run import test_not_run  # noqa: F401
