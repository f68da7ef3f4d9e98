# ruff: noqa: E501  (the rows quote Go case names whole, so that a reader can grep for them)
"""The cases of KFP's v2beta1 API tests (kubeflow/pipelines 7b70c7b95f) not run here, with why.

Each row is one Go case (Ginkgo It, in its Describe > Context path); a row leaves this table when
its case is ported. Only a case with assertions that cannot run here (Kubeflow multi-user mode,
Kubernetes, Argo, an upgrade between releases, KFP's step cache) is a pytest item, which skips with its reason. Cases with no assertion at all stay
in the table only: 164 pending Ginkgo cases (PDescribe/PContext/PIt, empty bodies), 3
whose body is only Skip(...), 7 Kubeflow-mode cases whose body is only Skip(...), and
1 loop over a directory that does not exist at this commit (no It at all).
"""

from __future__ import annotations

import pytest

PENDING = "pending in KFP (PDescribe/PContext/PIt) with an empty body: no assertion to port"
KUBEFLOW = "runs only in KFP's Kubeflow/multi-user mode (namespaces and access checks)"
KUBEFLOW_SKIP = 'defined only in KFP\'s Kubeflow mode, and its body is only Skip("Requires multi-user environment with restricted namespace"): no assertion'
KUBERNETES = "needs Kubernetes: deletes the ScheduledWorkflow custom resources"
GO_SKIP = "its body is only Skip(...) in KFP itself (a placeholder, or 'Server does not currently validate pipeline ownership'): no assertion"
ARGO = "needs Argo and Kubernetes: the ScheduledWorkflow resource, ML Metadata executions and artifacts, or pod logs after the pod is deleted"
UPGRADE = "needs two KFP releases and one database kept across an upgrade; the local server keeps its state in memory, per process"
CACHE = "needs KFP's step cache, kept in ML Metadata and applied by the driver in Argo pods; the local server has no step cache"
NO_CASE = "a loop over test_data/sdk_compiled_pipelines/valid/samples, which does not exist at 7b70c7b95f: it defines no It"

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
        "Create Pipeline API Tests > Create a pipeline with version using '/pipelines/create' > Pipeline with name and Pipelineversion with name and pipeline spec from file: %s",
        NO_CASE,
    ),
    (
        "api/pipeline_api_test.go",
        "Create Pipeline API Tests > Create a pipeline with version using '/pipelines/create' > Pipeline with name and Pipelineversion with name and pipeline spec from url: %s",
        GO_SKIP,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Create a pipeline with version using '/pipelines/create' > In a namespace you don't have access to",
        KUBEFLOW_SKIP,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Create a pipeline using '/pipelines' > In a namespace you don't have access to",
        KUBEFLOW_SKIP,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Get pipeline by ID > In a namespace you don't have access to",
        KUBEFLOW_SKIP,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Get pipeline version by ID > By valid version ID but with the pipeline ID that does not contain this version should ideally fail",
        GO_SKIP,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Get pipeline version by ID > In a namespace you don't have access to",
        KUBEFLOW_SKIP,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Delete by ID '/pipelines/{pipeline_id}' > In a namespace you don't have access to",
        KUBEFLOW_SKIP,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Delete pipeline version by ID '/pipelines/{pipeline_id}/versions/{pipeline_version_id}' > Delete pipeline version by ID with wrong pipeline ID should ideally fail",
        GO_SKIP,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > Delete pipeline version by ID '/pipelines/{pipeline_id}/versions/{pipeline_version_id}' > In a namespace you don't have access to",
        KUBEFLOW_SKIP,
    ),
    (
        "api/pipeline_api_test.go",
        "Verify Pipeline Negative Tests > List pipelines > In a namespace you don't have access to",
        KUBEFLOW_SKIP,
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
    (
        "api/argo_compatibility_api_test.go",
        "Argo runtime compatibility > creates a disabled recurring run and its ScheduledWorkflow",
        ARGO,
    ),
    (
        "api/argo_compatibility_api_test.go",
        "Argo runtime compatibility > retries a failed run through the run API",
        ARGO,
    ),
    (
        "api/argo_compatibility_api_test.go",
        "Argo runtime compatibility > writes execution and artifact metadata and serves archived logs after pod deletion",
        ARGO,
    ),
    (
        "api/upgrade_api_test.go",
        "Upgrade Test Preparation > Prepare test data > Upload pipelines and create experiments",
        UPGRADE,
    ),
    (
        "api/upgrade_api_test.go",
        "Upgrade Test Preparation > Prepare test data > Create pipeline run",
        UPGRADE,
    ),
    (
        "api/upgrade_api_test.go",
        "Upgrade Test Preparation > Prepare test data > Create pipeline run and wait it to go to RUNNING state",
        UPGRADE,
    ),
    (
        "api/upgrade_api_test.go",
        "Upgrade Test Preparation > Prepare test data > Create scheduled pipeline run",
        UPGRADE,
    ),
    (
        "api/upgrade_api_test.go",
        "Upgrade Test Verification > Verify resources after upgrade > Verify that Pipelines & experiments should persist correctly",
        UPGRADE,
    ),
    (
        "api/upgrade_api_test.go",
        "Upgrade Test Verification > Verify resources after upgrade > Verify pipeline run",
        UPGRADE,
    ),
    (
        "api/upgrade_api_test.go",
        "Upgrade Test Verification > Verify resources after upgrade > Verify you can create a pipeline run after upgrade",
        UPGRADE,
    ),
    (
        "api/upgrade_api_test.go",
        "Upgrade Test Verification > Verify resources after upgrade > Verify pipeline run that was in RUNNING state, still exists after the upgrade",
        UPGRADE,
    ),
    (
        "api/upgrade_api_test.go",
        "Upgrade Test Verification > Verify resources after upgrade > Verify scheduled pipeline run",
        UPGRADE,
    ),
    (
        "api/upgrade_api_test.go",
        "Upgrade Test Verification > Verify resources after upgrade > Verify you can create scheduled pipeline run after upgrade",
        UPGRADE,
    ),
    (
        "integration/cache_test.go",
        "CacheTestSuite.TestCacheRecurringRun",
        CACHE,
    ),
    (
        "integration/cache_test.go",
        "CacheTestSuite.TestCacheSingleRun",
        CACHE,
    ),
    (
        "integration/cache_test.go",
        "CacheTestSuite.TestCacheSingleRunWithPVC_SameName_Caches",
        CACHE,
    ),
]

#: the rows that are pytest items: a case with assertions that cannot run here
CASES = [row for row in TABLE if row[2] in (KUBEFLOW, KUBERNETES, ARGO, UPGRADE, CACHE)]


@pytest.mark.parametrize(("go_file", "case", "reason"), CASES,
                         ids=[f"{f}::{c}"[:150] for f, c, _ in CASES])  # fmt: skip
def test_not_run(go_file, case, reason):
    """backend/test/v2/<go_file> at 7b70c7b95f, the case named by the id: not run here."""
    pytest.skip(reason)
