# ruff: noqa: E501  (the rows quote Go case names whole, so that a reader can grep for them)
"""The cases of KFP's v2beta1 API tests (kubeflow/pipelines 7b70c7b95f) not run here, with why.

Each row is one Go case (Ginkgo It, in its Describe > Context path); each is a pytest item
that skips with its reason, so the count stays visible. A row leaves this table when its case
is ported. The Ginkgo rows were listed from the Go files; read them there.
"""

from __future__ import annotations

import pytest

from tests.kfp_api.support import go_id, valid_files

PENDING = "pending in KFP (PDescribe/PContext/PIt) with an empty body: no assertion to port"
KUBEFLOW = "runs only in KFP's Kubeflow/multi-user mode (namespaces and access checks)"
KUBERNETES = "needs Kubernetes: deletes the ScheduledWorkflow custom resources"
TAGS = (
    "not ported in this round: pipeline and version tags, which the local server lacks "
    "(a new difference)"
)
UNPORTED = "not ported in this round (ran out of time); runnable against the local server"

TABLE = [
    (
        "api/experiment_api_test.go",
        "List Experiments API Tests > Basic List Operations > When no experiments exist",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "List Experiments API Tests > Basic List Operations > After creating a single experiment",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "List Experiments API Tests > Basic List Operations > After creating multiple experiments",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "List Experiments API Tests > Basic List Operations > By namespace",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "List Experiments API Tests > Pagination > List experiments with page size limit",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "List Experiments API Tests > Pagination > List experiments with pagination - iterate through all pages (at least 2)",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "List Experiments API Tests > Sorting > Sort by name in ascending order",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "List Experiments API Tests > Sorting > Sort by name in descending order",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "List Experiments API Tests > Sorting > Sort by display name containing substring in ascending order",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "List Experiments API Tests > Sorting > Sort by display name containing substring in descending order",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "List Experiments API Tests > Sorting > Sort by creation date in ascending order",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "List Experiments API Tests > Sorting > Sort by creation date in descending order",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "List Experiments API Tests > Filtering > Filter by experiment id",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "List Experiments API Tests > Filtering > Filter by pipeline run id",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "List Experiments API Tests > Filtering > Filter by name",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "List Experiments API Tests > Filtering > Filter by created at",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "List Experiments API Tests > Filtering > Filter by namespace",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "List Experiments API Tests > Filtering > Filter by description",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "List Experiments API Tests > Combined Parameters > Filter and sort by name in ascending order",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "List Experiments API Tests > Combined Parameters > Filter and sort by created date in descending order",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "List Experiments API Tests > Combined Parameters > Filter by created date and sort by updated date in descending order",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "Create Experiment API Tests > Create an experiment > With just name",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "Create Experiment API Tests > Create an experiment > With name and description",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "Create Experiment API Tests > Create an experiment > With name length of 100 chars",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "Create Experiment API Tests > Create an experiment > With name containing ASCII characters",
        PENDING,
    ),
    ("api/experiment_api_test.go", "Get Experiment API Tests > Get by ID > With ID", PENDING),
    (
        "api/experiment_api_test.go",
        "Archive an experiment Tests > By ID > One that does not have any run(s) or recurring run(s)",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "Archive an experiment Tests > By ID > One that does have run(s) or recurring run(s)",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "Archive an experiment Tests > By ID > One that have currently RUNNING run(s) or recurring run(s)",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "Archive an experiment Tests > By ID > One that is associated to deleted run(s) or recurring run(s)",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "UnArchive an experiment Tests > By ID > One that does not have any run(s) or recurring run(s)",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "UnArchive an experiment Tests > By ID > One that does have run(s) or recurring run(s)",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "UnArchive an experiment Tests > By ID > One that is associated to deleted run(s) or recurring run(s)",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "Delete Experiment API Tests > Delete by ID > Delete an experiment by ID that does not have any run(s) or recurring run(s)",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "Delete Experiment API Tests > Delete by ID > Delete an experiment by ID that does have run(s) or recurring run(s), and validate that the runs still exists",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "Verify Pipeline Negative Tests > Create experiment > With 500 char name",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "Verify Pipeline Negative Tests > Create experiment > With CJK characters in the name",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "Verify Pipeline Negative Tests > Create experiment > With 10000k char description",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "Verify Pipeline Negative Tests > Create experiment > In a namespace you don't have access to",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "Verify Pipeline Negative Tests > Delete by ID > Delete by non existing ID",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "Verify Pipeline Negative Tests > Delete by ID > Delete by ID containing ASCII characters",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "Verify Pipeline Negative Tests > Delete by ID > In a namespace you don't have access to",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "Verify Pipeline Negative Tests > Archive > Archive by non existing ID",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "Verify Pipeline Negative Tests > Archive > Archive by ID containing ASCII characters",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "Verify Pipeline Negative Tests > Archive > Archive an archived experiment",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "Verify Pipeline Negative Tests > Archive > In a namespace you don't have access to",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "Verify Pipeline Negative Tests > UnArchive > UnArchive by non existing ID",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "Verify Pipeline Negative Tests > UnArchive > UnArchive an active experiment",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "Verify Pipeline Negative Tests > UnArchive > UnArchive by ID containing ASCII characters",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "Verify Pipeline Negative Tests > UnArchive > In a namespace you don't have access to",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "Verify Pipeline Negative Tests > List experiments > By partial name",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "Verify Pipeline Negative Tests > List experiments > By invalid name",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "Verify Pipeline Negative Tests > List experiments > By invalid ID",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "Verify Pipeline Negative Tests > List experiments > By invalid ID containing ASCII characters",
        PENDING,
    ),
    (
        "api/experiment_api_test.go",
        "Verify Pipeline Negative Tests > List experiments > In a namespace you don't have access to",
        PENDING,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines API Tests > Basic List Operations > After creating a single pipeline",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines API Tests > Basic List Operations > After creating multiple pipelines",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines API Tests > Basic List Operations > By namespace",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines API Tests > Pagination > List pipelines with page size limit",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines API Tests > Pagination > List pipelines with pagination - iterate through all pages (at least 2)",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines API Tests > Sorting > Sort by name in ascending order",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines API Tests > Sorting > Sort by name in descending order",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines API Tests > Sorting > Sort by display name containing substring in ascending order",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines API Tests > Sorting > Sort by display name containing substring in descending order",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines API Tests > Sorting > Sort by creation date in ascending order",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines API Tests > Sorting > Sort by creation date in descending order",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines API Tests > Filtering > Filter by pipeline id",
        UNPORTED,
    ),
    ("api/pipeline_api_test.go", "List Pipelines API Tests > Filtering > Filter by name", UNPORTED),
    (
        "api/pipeline_api_test.go",
        "List Pipelines API Tests > Filtering > Filter by created at",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines API Tests > Filtering > Filter by namespace",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines API Tests > Filtering > Filter by description",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines API Tests > Filtering > Filter by name NOT_EQUALS",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines API Tests > Filtering > Filter by pipeline_id IN with string_value should fail",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines API Tests > Filtering > Filter by pipeline_id IN with stringValues array",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines API Tests > Combined Parameters > Filter and sort by name in ascending order",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines API Tests > Combined Parameters > Filter and sort by created date in descending order",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines API Tests > Combined Parameters > Filter by created date and sort by updated date in descending order",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines API Tests > Filter by Tags > Filter pipelines by a single tag",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines API Tests > Filter by Tags > Filter pipelines by multiple tags",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines API Tests > Filter by Tags > Filter by tag that no pipeline has returns empty",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines Versions API Tests > Basic List Operations > When no pipeline versions exist",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines Versions API Tests > Basic List Operations > After creating a single pipeline version",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines Versions API Tests > Basic List Operations > After creating multiple pipeline versions",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines Versions API Tests > Basic List Operations > By pipeline ID - only returns versions for that pipeline",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines Versions API Tests > Pagination > List pipeline versions with page size limit",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines Versions API Tests > Pagination > List pipeline versions with pagination - iterate through all pages (at least 2)",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines Versions API Tests > Sorting > Sort by name in ascending order",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines Versions API Tests > Sorting > Sort by name in descending order",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines Versions API Tests > Sorting > Sort by display name containing substring in ascending order",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines Versions API Tests > Sorting > Sort by display name containing substring in descending order",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines Versions API Tests > Sorting > Sort by creation date in ascending order",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines Versions API Tests > Sorting > Sort by creation date in descending order",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines Versions API Tests > Filtering > Filter by pipeline version id",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines Versions API Tests > Filtering > Filter by name",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines Versions API Tests > Filtering > Filter by created at",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines Versions API Tests > Filtering > Filter by description",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines Versions API Tests > Filtering > Filter by name NOT_EQUALS",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines Versions API Tests > Filtering > Filter by pipeline_version_id IN with string_value should fail",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines Versions API Tests > Filtering > Filter by pipeline_version_id IN with stringValues array",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines Versions API Tests > Combined Parameters > Filter and sort by name in ascending order",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines Versions API Tests > Combined Parameters > Filter and sort by created date in descending order",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines Versions API Tests > Pipeline Version Tags in List > Versions with tags should include tags in list response",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines Versions API Tests > Pipeline Version Tags in List > Versions without tags should have empty tags in list response",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines Versions API Tests > Filter by Tags > Filter pipeline versions by a single tag",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines Versions API Tests > Filter by Tags > Filter pipeline versions by multiple tags",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines Versions API Tests > Filter by Tags > Filter by tag that no version has returns empty",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines Versions API Tests > Filter by Tags > Filter by tag with wrong value returns empty",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines Versions API Tests > Filter by Tags > Filter by tag with non-EQUALS operation should fail",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "List Pipelines Versions API Tests > Filter by Tags > Filter by tag combined with name filter",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Create Pipeline API Tests > Create a pipeline using '/pipelines' > With just name",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Create Pipeline API Tests > Create a pipeline using '/pipelines' > With name and description",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Create Pipeline API Tests > Create a pipeline using '/pipelines' > With name length of 100 chars",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Create Pipeline API Tests > Create a pipeline using '/pipelines' > With name containing ASCII characters",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Create Pipeline API Tests > Create a pipeline with tags using '/pipelines' > With name and tags",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Create Pipeline API Tests > Create a pipeline with tags using '/pipelines' > With name, description and tags",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Create Pipeline API Tests > Create a pipeline with tags using '/pipelines' > With empty tags map",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Create Pipeline API Tests > Create a pipeline with tags using '/pipelines' > Without tags (nil)",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Create Pipeline API Tests > Create a pipeline with version using '/pipelines/create' > Pipeline with name and Pipelineversion with name and pipeline spec from file: %s",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Create Pipeline API Tests > Create a pipeline with version using '/pipelines/create' > Pipeline with name and Pipelineversion with name and pipeline spec from url: %s",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Get Pipeline API Tests > Get by ID '/pipelines/{pipeline_id}' > With ID",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Get Pipeline API Tests > Get by ID '/pipelines/{pipeline_id}' > With ID and verify tags are returned",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Get Pipeline API Tests > Get by ID '/pipelines/{pipeline_id}' > With ID for pipeline created without tags returns no tags",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Get Pipeline API Tests > Get by name '/pipelines/names/{name}' > With full name",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Get Pipeline API Tests > Get by name '/pipelines/names/{name}' > With name and verify tags are returned",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Get Pipeline Version API Tests > Get by id '/pipelines/{pipeline_id}/versions/{pipeline_version_id}' > With valid pipeline id and version id",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Get Pipeline Version API Tests > Get by id '/pipelines/{pipeline_id}/versions/{pipeline_version_id}' > With valid pipeline id and version id - verify tags are returned when version has no tags",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Get Pipeline Version API Tests > Get by id '/pipelines/{pipeline_id}/versions/{pipeline_version_id}' > With valid pipeline id and version id - verify tags are returned when version has tags",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Get Pipeline Version API Tests > Get by id '/pipelines/{pipeline_id}/versions/{pipeline_version_id}' > Returns version even when pipeline ID in URL does not match the version's pipeline",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Get Pipeline Version API Tests > List pipeline versions with tags '/pipelines/{pipeline_id}/versions' > List versions and verify tags are included in response",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Get Pipeline Version API Tests > List pipeline versions with tags '/pipelines/{pipeline_id}/versions' > Version created without tags should have empty tags in list",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Create Pipeline Version API Tests > Create version via CreatePipelineVersion RPC '/pipelines/{pipeline_id}/versions' > Create version with valid pipeline ID, pipeline version body including PipelineID",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Create Pipeline Version API Tests > Create version via CreatePipelineVersion RPC '/pipelines/{pipeline_id}/versions' > Create version with tags",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Create Pipeline Version API Tests > Create version via CreatePipelineVersion RPC '/pipelines/{pipeline_id}/versions' > Create version with description",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Create Pipeline Version API Tests > Create version via CreatePipelineVersion RPC '/pipelines/{pipeline_id}/versions' > Create multiple versions for the same pipeline",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Delete Pipeline API Tests > Delete pipeline by ID '/pipelines/{pipeline_id}' > Delete pipeline by ID that does not have any versions",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Delete Pipeline API Tests > Delete pipeline by ID '/pipelines/{pipeline_id}' > Delete pipeline with tags and verify tags are cleaned up",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Delete Pipeline API Tests > Delete pipeline version by ID '/pipelines/{pipeline_id}/versions/{pipeline_version_id}' > Delete pipeline version by ID",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Delete Pipeline API Tests > Delete pipeline version by ID '/pipelines/{pipeline_id}/versions/{pipeline_version_id}' > Deletes version even when pipeline ID in URL does not match the version's pipeline",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Create a pipeline with version using '/pipelines/create' > With a valid pipeline and pipeline version name but invalid pipeline spec file",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Create a pipeline with version using '/pipelines/create' > With a valid pipeline and pipeline version name but invalid pipeline spec url",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Create a pipeline with version using '/pipelines/create' > In a namespace you don't have access to",
        KUBEFLOW,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Create a pipeline using '/pipelines' > With 500 char name",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Create a pipeline using '/pipelines' > With CJK characters in the name",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Create a pipeline using '/pipelines' > In a namespace you don't have access to",
        KUBEFLOW,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Get pipeline by ID > By non existing ID",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Get pipeline by ID > By ID containing ASCII characters",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Get pipeline by ID > In a namespace you don't have access to",
        KUBEFLOW,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Get pipeline version by ID > By non existing ID",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Get pipeline version by ID > By ID containing ASCII characters",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Get pipeline version by ID > By valid version ID but with the pipeline ID that does not contain this version should ideally fail",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Get pipeline version by ID > In a namespace you don't have access to",
        KUBEFLOW,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Delete by ID '/pipelines/{pipeline_id}' > Delete by ID that does have pipeline version(s)",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Delete by ID '/pipelines/{pipeline_id}' > Delete by non existing ID",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Delete by ID '/pipelines/{pipeline_id}' > Delete by ID containing ASCII characters",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Delete by ID '/pipelines/{pipeline_id}' > In a namespace you don't have access to",
        KUBEFLOW,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Delete pipeline version by ID '/pipelines/{pipeline_id}/versions/{pipeline_version_id}' > Delete pipeline version with an invalid ID",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Delete pipeline version by ID '/pipelines/{pipeline_id}/versions/{pipeline_version_id}' > Delete pipeline version by ID with wrong pipeline ID should ideally fail",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Delete pipeline version by ID '/pipelines/{pipeline_id}/versions/{pipeline_version_id}' > Delete by ID containing ASCII characters",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Delete pipeline version by ID '/pipelines/{pipeline_id}/versions/{pipeline_version_id}' > In a namespace you don't have access to",
        KUBEFLOW,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > List pipelines > By partial name",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > List pipelines > By invalid name",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > List pipelines > By invalid ID",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > List pipelines > By invalid ID containing ASCII characters",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > List pipelines > In a namespace you don't have access to",
        KUBEFLOW,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Negative tag tests > Filter by tag with non-EQUALS operation should fail",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Negative tag tests > Filter by tag with wrong value returns empty results",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Negative tag tests > Get tags of deleted pipeline should fail",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline - Positive Tests > Update pipeline via PATCH '/pipelines/{pipeline_id}' > Add tags to a pipeline that has no tags",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline - Positive Tests > Update pipeline via PATCH '/pipelines/{pipeline_id}' > Replace existing tags with new tags",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline - Positive Tests > Update pipeline via PATCH '/pipelines/{pipeline_id}' > Remove all tags by passing empty map",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline - Positive Tests > Update pipeline via PATCH '/pipelines/{pipeline_id}' > Update tags and verify via list filter",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline - Positive Tests > Update pipeline via PATCH '/pipelines/{pipeline_id}' > Update tags with maximum allowed key and value lengths (63 chars)",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline - Positive Tests > Update pipeline via PATCH '/pipelines/{pipeline_id}' > Update pipeline display_name along with tags",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline - Negative Tests > Update pipeline with invalid parameters > Update tags for non-existing pipeline ID",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline - Negative Tests > Update pipeline with invalid parameters > Update tags with key exceeding 63 characters",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline - Negative Tests > Update pipeline with invalid parameters > Update tags with value exceeding 63 characters",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline - Negative Tests > Update pipeline with invalid parameters > Update tags with empty key should fail",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline - Negative Tests > Update pipeline with invalid parameters > Update tags with key containing dot should fail",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline - Negative Tests > Update pipeline with invalid parameters > Update tags exceeding maximum count of 20 should fail",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline - Negative Tests > Update pipeline with invalid parameters > Update pipeline on a deleted pipeline should fail",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline - Negative Tests > Update pipeline with invalid parameters > Get pipeline by ID after deletion should not return tags",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline - Negative Tests > Update pipeline with invalid parameters > Deleted pipeline tags should not appear in list filter results",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline - Negative Tests > Create pipeline with invalid tags > With tag key exceeding 63 characters",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline - Negative Tests > Create pipeline with invalid tags > With tag value exceeding 63 characters",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline - Negative Tests > Create pipeline with invalid tags > With empty tag key",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline - Negative Tests > Create pipeline with invalid tags > With tag key containing dot",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline - Negative Tests > Create pipeline with invalid tags > With more than 20 tags",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline - Negative Tests > Create pipeline version with invalid tags > With tag key exceeding 63 characters on pipeline version",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline - Negative Tests > Create pipeline version with invalid tags > With tag value exceeding 63 characters on pipeline version",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline - Negative Tests > Create pipeline version with invalid tags > With empty tag key on pipeline version",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline - Negative Tests > Create pipeline version with invalid tags > With tag key containing dot on pipeline version",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline - Negative Tests > Create pipeline version with invalid tags > With more than 20 tags on pipeline version",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline Version > Update pipeline version tags via UpdatePipelineVersion > Add tags to an existing pipeline version",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline Version > Update pipeline version tags via UpdatePipelineVersion > Replace existing tags on a pipeline version",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline Version > Update pipeline version tags via UpdatePipelineVersion > Update pipeline version display_name along with tags",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline Version - Negative Tests > Update pipeline version with invalid parameters > Update tags with empty key on pipeline version should fail",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline Version - Negative Tests > Update pipeline version with invalid parameters > Update tags with key containing dot on pipeline version should fail",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline Version - Negative Tests > Update pipeline version with invalid parameters > Update tags exceeding maximum count on pipeline version should fail",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline Version - Negative Tests > Update pipeline version with invalid parameters > Update tags with key exceeding 63 characters on pipeline version should fail",
        UNPORTED,
    ),
    (
        "api/pipeline_api_test.go",
        "Update Pipeline Version - Negative Tests > Update pipeline version with invalid parameters > Update tags with value exceeding 63 characters on pipeline version should fail",
        UNPORTED,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Create a valid pipeline and verify the created run > Create a '%s' pipeline with cacheEnabled=%t and verify run",
        UNPORTED,
    ),  # per valid file and cache setting: see _expanded
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Create a valid pipeline and verify the created run > Create a '%s' pipeline, create an experiement and verify run with associated experiment",
        UNPORTED,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Associate a single experiment with multiple pipeline runs > Create an experiment and associate it multiple pipeline runs of the same pipeline",
        UNPORTED,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Associate a single experiment with multiple pipeline runs > Create an experiment and associate it pipeline runs of different pipelines",
        UNPORTED,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Create a pipeline run with HTTP proxy > Create a pipeline run with http proxy, using specs: %s",
        UNPORTED,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Archive pipeline run(s) > Create a pipeline run, wait for the run state to be reported, archive it and verify that archiving keeps the runtime state reported",
        UNPORTED,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Archive pipeline run(s) > Create a pipeline run, wait for the run to move to RUNNING or PENDING, archive it and verify that the run state is still RUNNING or PENDING on archiving",
        UNPORTED,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Unarchive pipeline run(s) > Create a pipeline run, archive it and unarchive it and verify the storage state",
        UNPORTED,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Terminate a pipeline run > Terminate a run in RUNNING state",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Terminate a pipeline run > Terminate a run in PENDING state",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Terminate a pipeline run > Terminate a run in SUCCESSFUL or ERRORED state",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Get All pipeline run > Create a Pipeline Run and validate that it gets returned in the List Runs API call",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Get All pipeline run > Create 2 pipeline Runs, and list it",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Get All pipeline run > List pipeline Runs when no runs exist",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Get All pipeline run > List pipeline Runs and sort by display name in ascending order",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Get All pipeline run > List pipeline Runs and sort by display name in descending order",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Get All pipeline run > List pipeline Runs and sort by id in ascending order",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Get All pipeline run > List pipeline Runs and sort by id in descending order",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Get All pipeline run > List pipeline Runs and sort by pipeline version id in ascending order",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Get All pipeline run > List pipeline Runs and sort by pipeline version id in descending order",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Get All pipeline run > List pipeline Runs and sort by creation date in ascending order",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Get All pipeline run > List pipeline Runs and sort by creation date in descending order",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Get All pipeline run > List pipeline Runs and sort by updated date in ascending order",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Get All pipeline run > List pipeline Runs and sort by updated date in descending order",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Get All pipeline run > List pipeline Runs by specifying page size",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Get All pipeline run > List pipeline Runs by specifying page size and iterate over at least 2 pages",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Get All pipeline run > List pipeline Runs filtering by run id",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Get All pipeline run > List pipeline Runs filtering by display name containing",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Get All pipeline run > List pipeline Runs filtering by `name` EQUALS",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Get All pipeline run > List pipeline Runs filtering by `name` NOT Equals",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Get All pipeline run > List pipeline Runs filtering by creation date",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Get All pipeline run > List pipeline Runs by experiment id",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run > Get All pipeline run > List pipeline Runs by namespace",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Verify pipeline run creation failure in Multi User Mode > Create a run in an experiment that is not in the namespace that you have access to",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Verify pipeline run creation failure in Multi User Mode > Create a run without an experiment in a Multi User Mode deployment",
        KUBEFLOW,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Unarchive a pipeline run > Unarchive a deleted run",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Unarchive a pipeline run > Unarchive a non existent run",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Unarchive a pipeline run > Unarchive an available run",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Unarchive a pipeline run > In a namespace you don't have access to",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Archive a pipeline run > Archive a deleted run",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Archive a pipeline run > Archive a non existent run",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Archive a pipeline run > Archive an already archived run",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Archive a pipeline run > In a namespace you don't have access to",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Terminate a pipeline run > Terminate a deleted run",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Terminate a pipeline run > Terminate a non existent run",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Terminate a pipeline run > Terminate an already terminated run",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Terminate a pipeline run > In a namespace you don't have access to",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Delete a pipeline run > Delete a deleted run",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Delete a pipeline run > Delete a non existent run",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Associate a pipeline run with invalid experiment > Associate a run with an archived experiment",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Associate a pipeline run with invalid experiment > Associate a run with non existent experiment",
        PENDING,
    ),
    (
        "api/pipeline_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Associate a pipeline run with invalid experiment > Associate a run with deleted experiment",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run > Create reccurring pipeline run > Create a Pipeline Run with cron that runs every 5min",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run > Create reccurring pipeline run > Create a Pipeline Run with cron that runs at a specific time and day",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run > Create reccurring pipeline run > Create a Pipeline Run with cron that runs on alternate days",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run > Create reccurring pipeline run > Create a Pipeline Run with cron that runs right now",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run > Create reccurring pipeline run > Create a Pipeline Run with cache disabled",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run > Disable reccurring pipeline run > Create a Recurring pipeline Run, disable a run and make sure its not deleted",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run > Enable a disabled reccurring pipeline run > Create a Recurring pipeline Run, disable it and then enable it",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run > Get a reccurring pipeline run > Create a Recurring pipeline Run, verify its details",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "List Recurring Pipeline Runs > Basic Operations > Create 2 runs and list",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "List Recurring Pipeline Runs > Basic Operations > When no recurring runs exist",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "List Recurring Pipeline Runs > Sorting > List Recurring pipeline Runs and sort by display name in ascending order",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "List Recurring Pipeline Runs > Sorting > List Recurring pipeline Runs and sort by display name in descending order",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "List Recurring Pipeline Runs > Sorting > List Recurring pipeline Runs and sort by id in ascending order",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "List Recurring Pipeline Runs > Sorting > List Recurring pipeline Runs and sort by id in descending order",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "List Recurring Pipeline Runs > Sorting > List Recurring pipeline Runs and sort by pipeline version id in ascending order",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "List Recurring Pipeline Runs > Sorting > List Recurring pipeline Runs and sort by pipeline version id in descending order",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "List Recurring Pipeline Runs > Sorting > List Recurring pipeline Runs and sort by creation date in ascending order",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "List Recurring Pipeline Runs > Sorting > List Recurring pipeline Runs and sort by creation date in descending order",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "List Recurring Pipeline Runs > Sorting > List Recurring pipeline Runs and sort by updated date in ascending order",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "List Recurring Pipeline Runs > Sorting > List Recurring pipeline Runs and sort by updated date in descending order",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "List Recurring Pipeline Runs > Sorting > List Recurring pipeline Runs and sort by cron time in ascending order",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "List Recurring Pipeline Runs > Sorting > List Recurring pipeline Runs and sort by cron time in descending order",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "List Recurring Pipeline Runs > Specify Page Size > List by page size",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "List Recurring Pipeline Runs > Specify Page Size > List by page size and iterate over at least 2 pages",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "List Recurring Pipeline Runs > Filtering > By run id",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "List Recurring Pipeline Runs > Filtering > By run 'name' EQUALS",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "List Recurring Pipeline Runs > Filtering > By run 'name' NOT EQUALS",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "List Recurring Pipeline Runs > Filtering > By display name containing",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "List Recurring Pipeline Runs > Filtering > By creation date",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "List Recurring Pipeline Runs > Filtering > By cron time",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "List Recurring Pipeline Runs > Filtering > By experiment id",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "List Recurring Pipeline Runs > Filtering > By namespace",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "List Recurring Pipeline Runs > Filtering > By name in ascending order",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "List Recurring Pipeline Runs > Sort and Filter > Filter and sort by created date in descending order",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "List Recurring Pipeline Runs > Sort and Filter > Filter by created date and sort by updated date in descending order",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Create reccurring pipeline run > Create a Pipeline Run with invalid cron",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Create reccurring pipeline run > In a namespace you don't have access to",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run Negative Tests > List reccurring pipeline runs in kubeflow mode > List reccurring pipeline runs in a namespace you don't have access to",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Disable a recurring pipeline run > Disable a deleted recurring run",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Disable a recurring pipeline run > Disable a non existent recurring run",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Disable a recurring pipeline run > Disable already disabled recurring run",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Disable a recurring pipeline run > In a namespace you don't have access to",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Enable a recurring pipeline run > Enable a deleted recurring run",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Enable a recurring pipeline run > Enable a non existent recurring run",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Enable a recurring pipeline run > Enable an already enabled recurring run",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Enable a recurring pipeline run > Enable an recurring run for a run that's associated with a delete experiment",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Enable a recurring pipeline run > Enable an recurring run for a run that's associated with an archived experiment",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Enable a recurring pipeline run > In a namespace you don't have access to",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Delete a recurring pipeline run > Delete a deleted recurring run",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Delete a recurring pipeline run > Delete a non existent recurring run",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Delete a recurring pipeline run > Delete an already deleted recurring run",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Associate a pipeline recurring run with invalid experiment > Associate a recurring run with an archived experiment",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Associate a pipeline recurring run with invalid experiment > Associate a recurring run with non existent experiment",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Associate a pipeline recurring run with invalid experiment > Associate a recurring run with deleted experiment",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Get a reccurring pipeline run > Get Recurring pipeline Run for a deleted run",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Get a reccurring pipeline run > Get Recurring pipeline Run for a non existing run",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Get a reccurring pipeline run > Get Recurring pipeline Run for a non recurring run i.e. one-off run",
        PENDING,
    ),
    (
        "api/pipeline_recurring_run_api_test.go",
        "Verify Pipeline Run Negative Tests > Get a reccurring pipeline run > In a namespace you don't have access to",
        PENDING,
    ),
    (
        "api/pipeline_upload_api_test.go",
        "Verify Pipeline Upload with Tags > Upload a valid pipeline with tags and verify tags are stored > Upload %s pipeline with tags and verify tags are returned",
        TAGS,
    ),
    (
        "api/pipeline_upload_api_test.go",
        "Verify Pipeline Upload with Tags > Upload a valid pipeline with tags and verify tags are stored > Upload %s pipeline with empty tags map",
        TAGS,
    ),
    (
        "api/pipeline_upload_api_test.go",
        "Verify Pipeline Upload with Tags > Upload a valid pipeline with tags and verify tags are stored > Upload %s pipeline without tags and verify no tags are returned",
        TAGS,
    ),
    (
        "api/pipeline_upload_api_test.go",
        "Verify Pipeline Upload with Tags > Upload a valid pipeline with tags and verify tags are stored > Upload %s pipeline with tags and verify tags via GetPipeline",
        TAGS,
    ),
    (
        "api/pipeline_upload_api_test.go",
        "Verify Pipeline Upload Version with Tags > Upload a pipeline version with tags and verify tags are stored > Upload a pipeline version with tags and verify tags are returned in the response",
        TAGS,
    ),
    (
        "api/pipeline_upload_api_test.go",
        "Verify Pipeline Upload Version with Tags > Upload a pipeline version with tags and verify tags are stored > Upload a pipeline version with tags and verify tags via GetPipelineVersion endpoint",
        TAGS,
    ),
    (
        "api/pipeline_upload_api_test.go",
        "Verify Pipeline Upload Version with Tags > Upload a pipeline version with tags and verify tags are stored > Upload a pipeline version with tags and verify tags via ListPipelineVersions",
        TAGS,
    ),
    (
        "api/pipeline_upload_api_test.go",
        "Verify Pipeline Upload Version with Tags > Upload a pipeline version with tags and verify tags are stored > Upload a pipeline version without tags and verify no tags are returned",
        TAGS,
    ),
    (
        "api/pipeline_upload_api_test.go",
        "Verify Pipeline Upload Version with Tags > Upload a pipeline version with tags and verify tags are stored > Upload a pipeline version with empty tags map",
        TAGS,
    ),
    (
        "api/pipeline_upload_api_test.go",
        "Verify Pipeline Upload Version with Tags Failure > Upload a pipeline version with invalid tags > Upload a pipeline version with tag key exceeding 63 characters",
        TAGS,
    ),
    (
        "api/pipeline_upload_api_test.go",
        "Verify Pipeline Upload Version with Tags Failure > Upload a pipeline version with invalid tags > Upload a pipeline version with tag value exceeding 63 characters",
        TAGS,
    ),
    (
        "api/pipeline_upload_api_test.go",
        "Verify Pipeline Upload Version with Tags Failure > Upload a pipeline version with invalid tags > Upload a pipeline version with invalid tags JSON format",
        TAGS,
    ),
    (
        "api/pipeline_upload_api_test.go",
        "Verify Pipeline Upload Version Failure > Upload a pipeline in MultiUser Mode > Upload a pipeline in a namespace you don't have access to",
        PENDING,
    ),
    (
        "api/report_api_test.go",
        "Create Workflow API Tests > Create Workflow > Create a workflow from: %s",
        PENDING,
    ),
    (
        "api/report_api_test.go",
        "Create Workflow API Tests > Create Workflow > Create a scheduled workflow from: %s",
        PENDING,
    ),
    (
        "api/report_api_test.go",
        "Create Workflow Negative Tests > Create workflow > With invalid workflow schema",
        PENDING,
    ),
    (
        "api/report_api_test.go",
        "Create Workflow Negative Tests > Create workflow > In a namespace you don't have access to",
        PENDING,
    ),
    (
        "api/report_api_test.go",
        "Create Workflow Negative Tests > Create scheduled workflow > With invalid workflow schema",
        PENDING,
    ),
    (
        "api/report_api_test.go",
        "Create Workflow Negative Tests > Create scheduled workflow > With valid workflow schema but invalid cron",
        PENDING,
    ),
    (
        "api/report_api_test.go",
        "Create Workflow Negative Tests > Create scheduled workflow > In a namespace you don't have access to",
        PENDING,
    ),
    (
        "integration/recurring_run_api_test.go",
        "RecurringRunApiTestSuite.TestRecurringRunApis_SwfNotFound",
        KUBERNETES,
    ),
]

_LOOP = "Create a '%s' pipeline with cacheEnabled=%t and verify run"


def _expanded() -> list[tuple[str, str, str]]:
    """pipeline_run_api_test.go's loop: one It per (cache setting, file of the valid dir)."""
    out = []
    for row in TABLE:
        if _LOOP in row[1]:
            for cache in ("false", "true"):
                for path in valid_files():
                    case = row[1].split(" (")[0].replace("%s", go_id(path)).replace("%t", cache)
                    out.append((row[0], case, row[2]))
        else:
            out.append(row)
    return out


CASES = _expanded()


@pytest.mark.parametrize(("go_file", "case", "reason"), CASES,
                         ids=[f"{f}::{c}"[:150] for f, c, _ in CASES])  # fmt: skip
def test_not_run(go_file, case, reason):
    """backend/test/v2/<go_file> at 7b70c7b95f, the case named by the id: not run here."""
    pytest.skip(reason)
