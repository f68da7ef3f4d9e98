"""Finishes KServe's kustomized objects for a cluster without cert-manager, as a filter: reads the
YAML stream of `kubectl kustomize cluster/manifests/kserve`, writes the objects to apply.

What cert-manager does on a Kubeflow cluster is done here instead (KServe v0.15.2
config/certmanager/certificate.yaml and config/default/*cainjection*): the Issuer and Certificate
are dropped (cluster/kserve.sh makes the webhook's Secret), and the CA that signed its certificate
goes into the caBundle of every webhook and of the InferenceService CRD's conversion webhook. The
images named in the inferenceservice-config ConfigMap get the release's tag, as the release's
install/v0.15.2/kserve.yaml has them (the source's config/ says :latest).

Usage: python kserve_objects.py CA_FILE {crds,first,runtimes} < objects.yaml > to_apply.yaml
  crds: the CustomResourceDefinitions, applied first (a custom object is refused until its
  CRD is established); first: the rest but the serving runtimes; runtimes: the
  ClusterServingRuntimes, which KServe's own webhook validates, so applied once it is Ready.
"""

import base64
import json
import sys

import yaml

RELEASE = "v0.15.2"
PARTS = ("crds", "first", "runtimes")


def part(doc: dict) -> str:
    """Which of PARTS an object is applied in."""
    if doc["kind"] == "CustomResourceDefinition":
        return "crds"
    return "runtimes" if doc["kind"] == "ClusterServingRuntime" else "first"


def finish(doc: dict, ca_bundle: str) -> dict | None:
    if doc["apiVersion"].startswith("cert-manager.io/"):
        return None
    annotations = doc.get("metadata", {}).get("annotations") or {}
    annotations.pop("cert-manager.io/inject-ca-from", None)
    for webhook in doc.get("webhooks", []):
        webhook["clientConfig"]["caBundle"] = ca_bundle
    conversion = (doc.get("spec") or {}).get("conversion") or {}
    if conversion.get("webhook", {}).get("clientConfig"):
        conversion["webhook"]["clientConfig"]["caBundle"] = ca_bundle
    if doc["kind"] == "ConfigMap" and doc["metadata"]["name"] == "inferenceservice-config":
        for key, value in doc["data"].items():
            if key != "_example":
                doc["data"][key] = _release_tags(value)
    return doc


def _release_tags(value: str) -> str:
    """A section of the ConfigMap (JSON) with each kserve/ image at the release's tag."""
    try:
        section = json.loads(value)
    except ValueError:
        return value
    if not isinstance(section, dict):
        return value
    before = json.dumps(section)
    for part in [section, *section.values()]:
        if not isinstance(part, dict):
            continue
        for key in ("image", "defaultJobImage"):
            if str(part.get(key, "")).startswith("kserve/") and ":" in part[key]:
                part[key] = part[key].rsplit(":", 1)[0] + ":" + RELEASE
        if "defaultImageVersion" in part:
            part["defaultImageVersion"] = RELEASE
    return value if json.dumps(section) == before else json.dumps(section, indent=2)


def main() -> int:
    if len(sys.argv) != 3 or sys.argv[2] not in PARTS:
        print(__doc__.split("Usage: ")[1].splitlines()[0], file=sys.stderr)
        return 2
    with open(sys.argv[1], "rb") as ca:
        ca_bundle = base64.b64encode(ca.read()).decode()
    out = []
    for doc in yaml.safe_load_all(sys.stdin):
        if not doc or part(doc) != sys.argv[2]:
            continue
        doc = finish(doc, ca_bundle)
        if doc is not None:
            out.append(doc)
    yaml.safe_dump_all(out, sys.stdout, sort_keys=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
