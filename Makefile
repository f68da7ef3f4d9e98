# The README's commands. CI (.ci/run) and people run the same targets.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo
VERSION := $(shell sed -n 's/^__version__ = "\(.*\)"/\1/p' kfp_bench/__init__.py)

.PHONY: setup demo test test-fast lint docs screenshot bench benchmarks image clean cluster cluster-kserve \
	cluster-knative cluster-keda cluster-test cluster-down

$(STAMP): requirements.txt pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt -e ".[all]"
	$(PY) -m pip check
	touch $(STAMP)

setup: $(STAMP)

# The demo's environment: every command and the local servers at the tested versions, without
# the test tools that make setup adds (a shorter install from a fresh clone).
$(DEMO_STAMP): requirements.txt pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c requirements.txt -e ".[all]"
	$(PY) -m pip check
	touch $(DEMO_STAMP)

# (an environment set up for the tests has all the demo needs)
demo: $(if $(wildcard $(STAMP)),$(STAMP),$(DEMO_STAMP))
	$(VENV)/bin/kfp-bench demo --out results/demo

test: $(STAMP)
	scripts/system-deps.sh
	scripts/test.sh

# The unit tier of tests/README.md, for the inner loop: no servers, no pods, no timing tests.
test-fast: $(STAMP)
	scripts/test.sh -n 4 --dist loadfile -m "not slow and not timing" tests/stats tests/report tests/kserve

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# The docs site (mkdocs.yml) into site/, in strict mode: a broken link or a missing page fails.
# The command, metric and flag references are written from the code as it builds (docs/gen/).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

# docs/report.png, the README's picture: the demo's report.html in headless Chromium (run make
# demo first).
screenshot: $(STAMP)
	scripts/system-deps.sh
	$(PY) scripts/screenshot.py

bench: $(STAMP)
	$(PY) bench/run.py

# BENCHMARKS.md's generated part, from the latest results file of each benchmark in bench/results/.
benchmarks: $(STAMP)
	$(PY) bench/render.py

# The image of image mode (Dockerfile), where a Docker engine runs. The wheel is built from a
# copy of the checkout's files, never in-tree: setuptools' build/ keeps modules removed since.
image: $(STAMP)
	$(PY) -c 'from pathlib import Path; from kfp_bench.sandbox.pods import build_wheel; \
		build_wheel(Path("dist"), Path("."))'
	docker build -t kfp-bench:$(VERSION) .

# The real-cluster tier (docs/real-kfp.md): a single-node Kubernetes 1.34 with Argo v3.7.3 and
# SeaweedFS, built from the Go module proxy once and cached outside the repository; its tests skip
# with one line when no cluster is up. Needs root.
cluster: $(STAMP)
	scripts/cluster-deps.sh
	cluster/up.sh

# KServe v0.15.2 (RawDeployment, with metrics-server for its HPAs) on that cluster, started first
# when none is up (docs/real-kfp.md#kserve).
cluster-kserve: $(STAMP)
	scripts/cluster-deps.sh
	[ -e .cluster/env ] || cluster/up.sh
	cluster/kserve.sh

# Knative Serving v0.43.3 (Knative 1.16, KServe's Serverless mode) beside KServe, both started
# first if they are not up.
cluster-knative: cluster-kserve
	cluster/knative.sh

# KEDA v2.16.1 beside KServe (its ScaledObjects drive the HPAs of RawDeployment InferenceServices
# with serving.kserve.io/autoscalerClass: keda), both started first if they are not up.
cluster-keda: cluster-kserve
	cluster/keda.sh

cluster-test: $(STAMP)
	$(PY) -m pytest tests/cluster

cluster-down:
	cluster/down.sh

clean:
	rm -rf $(VENV) results build dist site *.egg-info
