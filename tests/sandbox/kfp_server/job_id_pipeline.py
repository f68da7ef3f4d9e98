"""A one-step pipeline that prints its job id (``dsl.PIPELINE_JOB_ID_PLACEHOLDER``).

No ``from __future__ import annotations`` here: the KFP SDK reads a component's annotations as
types, and postponed ones are strings it refuses.
"""

from kfp import dsl


@dsl.component(base_image="python:3.11-slim")
def say(job_id: str):
    print(f"job id is [{job_id}]")


@dsl.pipeline(name="job-id")
def job_id_pipeline():
    say(job_id=dsl.PIPELINE_JOB_ID_PLACEHOLDER)
