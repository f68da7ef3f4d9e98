"""Knative Serving v0.43.3 (Knative 1.16, KServe's Serverless mode) for this cluster, as a filter:
reads the YAML of Knative's own objects, writes the objects to apply.

Its input is what cluster/knative.sh copies from the Go module cache: knative.dev/serving's
config/core (the objects of the release's serving-core.yaml) and the CRDs the release's
serving-crds.yaml takes from knative.dev/networking (certificate, ingress, serverlessservice,
domain-claim: upstream they are symlinks into that module, which module zips drop) and
knative.dev/caching (image), and networking's config-network ConfigMap. What differs from the
release:

- The images: each ``ko://knative.dev/serving/cmd/NAME`` (config/core/deployments/*.yaml, the
  queue-proxy in configmaps/deployment.yaml and 999-cache.yaml) is the image images.sh builds
  here from that program, ``IMAGE_PREFIX + NAME:v0.43.3`` (the release names them by digest).
- config-deployment's ``registries-skipping-tag-resolving`` (configmaps/deployment.yaml) also
  lists Docker Hub, as go-containerregistry names it (index.docker.io, for kserve/sklearnserver
  and docker.io/...): no registry is reachable, so the controller cannot resolve a revision's
  image tag to a digest (pkg/reconciler/revision/resolve.go:110 skips those registries); the
  images are imported into the node.
- No ingress: config-network keeps its default class (Kourier's), for which nothing runs here
  (docs/real-kfp.md#knative says what that leaves untested).

Usage: python knative_objects.py {crds,rest} < objects.yaml > to_apply.yaml
  crds: the CustomResourceDefinitions, applied first; rest: everything else.
"""

import sys

import yaml

VERSION = "v0.43.3"
IMAGE_PREFIX = "gcr.io/knative-releases/knative.dev/serving/cmd/"
KO = "ko://knative.dev/serving/cmd/"
#: the programs of cluster/build.sh's knative group, each an image of images.sh
PROGRAMS = ("controller", "webhook", "activator", "autoscaler", "queue")
SKIP_TAG_RESOLVING = "kind.local,ko.local,dev.local,index.docker.io"
PARTS = ("crds", "rest")


def image(ko: str) -> str:
    name = ko.removeprefix(KO)
    if not ko.startswith(KO) or name not in PROGRAMS:
        raise ValueError(f"no image is built here for {ko}")
    return f"{IMAGE_PREFIX}{name}:{VERSION}"


def _images(node):
    """``node`` with each ko:// string replaced by its image."""
    if isinstance(node, dict):
        return {k: _images(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_images(v) for v in node]
    if isinstance(node, str) and node.startswith("ko://"):
        return image(node)
    return node


def finish(doc: dict) -> dict:
    doc = _images(doc)
    meta = doc.get("metadata", {})
    if doc["kind"] == "ConfigMap" and meta.get("name") == "config-deployment":
        doc["data"]["registries-skipping-tag-resolving"] = SKIP_TAG_RESOLVING
    return doc


def main() -> int:
    if len(sys.argv) != 2 or sys.argv[1] not in PARTS:
        print(__doc__.split("Usage: ")[1].splitlines()[0], file=sys.stderr)
        return 2
    out = []
    for doc in yaml.safe_load_all(sys.stdin):
        if not doc:
            continue
        crd = doc["kind"] == "CustomResourceDefinition"
        if crd == (sys.argv[1] == "crds"):
            out.append(finish(doc))
    yaml.safe_dump_all(out, sys.stdout, sort_keys=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
