"""The history on multi-user Kubeflow's SeaweedFS with a profile's own key, made as KFP's profile
controller makes it: an IAM user named after the namespace, an access key, and the controller's
policy, verbatim (kubeflow/manifests 009c88084 applications/pipeline/upstream/base/installs/
multi-user/pipelines-profile-controller/sync.py:382-409), on a real SeaweedFS's IAM API.

That policy lets the key put and get under mlpipeline/private/NAMESPACE/ but not list the bucket,
which the history needs: the store says so and names the grant; with the one statement that
docs/running-in-a-cluster.md gives added, the history works there."""

from __future__ import annotations

import json

import pytest

from kfp_bench.errors import HistoryError
from kfp_bench.history.uri import open_store
from tests.seaweedfs import ACCESS_KEY, SECRET_KEY, seaweedfs

NAMESPACE = "team-a"
BUCKET = "mlpipeline"


def _controller_policy(ns: str) -> dict:
    """sync.py:392-409 at 009c88084, S3_BUCKET_NAME = 'mlpipeline' (sync.py:24)."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": ["s3:Put*", "s3:Get*", "s3:List*"],
                "Resource": [
                    f"arn:aws:s3:::{BUCKET}/artifacts/*",
                    f"arn:aws:s3:::{BUCKET}/private-artifacts/{ns}/*",
                    f"arn:aws:s3:::{BUCKET}/private/{ns}/*",
                    f"arn:aws:s3:::{BUCKET}/shared/*",
                ],
            }
        ],
    }


#: What docs/running-in-a-cluster.md tells an admin to add: listing, under the profile's prefix.
LIST_STATEMENT = {
    "Effect": "Allow",
    "Action": ["s3:ListBucket"],
    "Resource": [f"arn:aws:s3:::{BUCKET}"],
    "Condition": {"StringLike": {"s3:prefix": [f"private/{NAMESPACE}/*"]}},
}


@pytest.fixture(scope="module")
def profile(tmp_path_factory):
    """A SeaweedFS whose IAM API takes writes, the mlpipeline bucket, and the profile's key."""
    import boto3

    with seaweedfs(tmp_path_factory.mktemp("seaweedfs-iam"), "-s3.iam.readOnly=false") as server:
        admin = {
            "endpoint_url": server.endpoint,
            "aws_access_key_id": ACCESS_KEY,
            "aws_secret_access_key": SECRET_KEY,
            "region_name": "us-east-1",
        }
        boto3.client("s3", **admin).create_bucket(Bucket=BUCKET)
        iam = boto3.client("iam", **admin)
        iam.create_user(UserName=NAMESPACE)
        key = iam.create_access_key(UserName=NAMESPACE)["AccessKey"]
        iam.put_user_policy(
            UserName=NAMESPACE,
            PolicyName=f"KubeflowProject{NAMESPACE}",
            PolicyDocument=json.dumps(_controller_policy(NAMESPACE)),
        )
        yield server, iam, key


@pytest.fixture
def as_profile(profile, aws_env, monkeypatch, tmp_path):
    """The report step's pod: no AWS key in the environment, KFP's Secret mounted."""
    server, iam, key = profile
    secret = tmp_path / "mlpipeline-minio-artifact"
    secret.mkdir()
    (secret / "accesskey").write_text(key["AccessKeyId"])
    (secret / "secretkey").write_text(key["SecretAccessKey"])
    monkeypatch.setenv("KFP_BENCH_MINIO_SECRET_DIR", str(secret))
    monkeypatch.setenv("AWS_ENDPOINT_URL", server.endpoint)
    monkeypatch.delenv("AWS_ACCESS_KEY_ID", raising=False)
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY", raising=False)
    return iam


def test_the_controllers_policy_alone_cannot_list_and_the_message_names_the_grant(as_profile):
    with pytest.raises(HistoryError) as err:
        open_store(f"minio://{BUCKET}/private/{NAMESPACE}/kfp-bench")
    message = str(err.value)
    assert "access denied (AccessDenied) listing private/team-a/kfp-bench/" in message
    assert "s3:ListBucket on arn:aws:s3:::mlpipeline" in message


def test_with_the_list_statement_the_history_lives_under_the_profiles_prefix(as_profile):
    as_profile.put_user_policy(
        UserName=NAMESPACE,
        PolicyName="KfpBenchHistoryList",
        PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [LIST_STATEMENT]}),
    )
    store = open_store(f"minio://{BUCKET}/private/{NAMESPACE}/kfp-bench")
    assert store.write("k", "summary.json", b"x") and not store.write("k", "summary.json", b"y")
    assert store.keys() == {"k": ["summary.json"]}
    # another profile's prefix stays closed to this key
    with pytest.raises(HistoryError, match="access denied"):
        open_store(f"minio://{BUCKET}/private/team-b/kfp-bench")
