# The image of image mode: every step of the compiled pipeline runs in it with nothing installed
# at start (kfp-bench compile --image REGISTRY/kfp-bench:TAG). kfp-bench's wheel with the extras
# the steps and the CLI use, and kfp itself, each at the version the tests ran.
#   make image                # builds dist/kfp_bench-*.whl, then this image as kfp-bench:VERSION
#   docker tag kfp-bench:0.1.0 REGISTRY/kfp-bench:0.1.0 && docker push REGISTRY/kfp-bench:0.1.0
#   kfp-bench compile --image REGISTRY/kfp-bench:0.1.0 --out compiled-image
FROM python:3.11-slim
COPY requirements.txt scripts/image-install.sh dist/kfp_bench-*.whl /tmp/kfp-bench/
RUN sh /tmp/kfp-bench/image-install.sh /tmp/kfp-bench && rm -rf /tmp/kfp-bench
