# The README's commands. CI (.ci/run) and people run the same targets.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup demo test lint bench clean

# engine.py and engine.pxd: setup.py compiles the load engine's twin from them.
$(STAMP): requirements.txt setup.py pyproject.toml kfp_bench/load/engine.py kfp_bench/load/engine.pxd
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	scripts/build-deps.sh $(PY)
	$(PY) -m pip install -q --no-deps -e .
	$(PY) -m pip check
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/kfp-bench demo --out results/demo

test: $(STAMP)
	scripts/system-deps.sh
	scripts/test.sh

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

bench: $(STAMP)
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) results build *.egg-info
