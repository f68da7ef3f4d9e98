#!/bin/sh
# The image's install, run by the Dockerfile and by the image-mode test alike (in a fresh virtual
# environment there): kfp-bench's wheel from DIR with the extras the steps and the CLI use, every
# version from DIR/requirements.txt, then `pip check`. Nothing is left to install at a step's
# start: the image mode's steps run `python3 -m kfp.dsl.executor_main` directly.
#   scripts/image-install.sh DIR [PYTHON]
set -eu
dir="$1"
py="${2:-python3}"
wheel=$(ls "$dir"/kfp_bench-*.whl)
"$py" -m pip install --no-cache-dir --disable-pip-version-check -q \
    -c "$dir/requirements.txt" "$wheel[cli]"
"$py" -m pip check
