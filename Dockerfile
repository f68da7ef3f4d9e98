# An image for clusters that cannot reach PyPI: kfp-bench's pinned requirements preinstalled.
#   docker build -t REGISTRY/kfp-bench:0.1.0 .
#   kfp-bench compile --base-image REGISTRY/kfp-bench:0.1.0 --out compiled-offline
# The components' pip installs then find every pin already satisfied (no index is contacted),
# and the engine itself still comes from the compiled YAML.
FROM python:3.11-slim
WORKDIR /opt/kfp-bench
COPY requirements.txt .
RUN grep -v -E '^(pytest|ruff|gcp-storage-emulator)==' requirements.txt > runtime.txt \
    && pip install --no-cache-dir -r runtime.txt \
    && pip check
COPY . /opt/kfp-bench/src
RUN pip install --no-cache-dir --no-deps /opt/kfp-bench/src
