"""The child pipelines kfp-bench spawns runs of, bundled so a benchmark needs no manifest of yours.

* ``noop``: one step that does nothing: pure orchestration overhead (pod start, driver, launcher).
* ``fanout``: K parallel steps and a join: what the scheduler and the API do under fan-out.
* ``train``: a small training pipeline on scikit-learn's bundled iris data (no download): load
  and split, fit, evaluate.

Their steps are the workload being measured rather than kfp-bench steps, so they live here with
the wiring instead of in kfp_bench/components/. Every child pipeline takes ``node_selector`` (a
JSON object of node labels, empty for none), which kfp_bench's ``run_node_selector`` fills: KFP's
benchmark guide pins child runs to a node pool named pool-1.
"""

from kfp import dsl, kubernetes
from kfp.dsl import Input, Metrics, Output

# Imports inside functions: KFP ships only this function's source to the step's pod (a lightweight
# component), so what it uses is imported inside it.

BASE_IMAGE = "python:3.11-slim"
#: Equal to requirements.txt, so that kfp.local's pip install is a no-op in this venv.
SKLEARN = "scikit-learn==1.9.1"
CHILDREN = ("noop", "fanout", "train")


@dsl.component(base_image=BASE_IMAGE)
def noop_step() -> str:
    """Do nothing, so the run measures orchestration only.

    Returns:
        "ok".
    """
    return "ok"


@dsl.component(base_image=BASE_IMAGE)
def fan_items(width: int) -> list:
    """The items of the fan-out.

    Args:
        width: number of parallel steps.

    Returns:
        [0, 1, ..., width - 1].
    """
    if not 1 <= width <= 1000:
        raise ValueError(f"width={width}: give 1 to 1000 parallel steps")
    return list(range(width))


@dsl.component(base_image=BASE_IMAGE)
def fan_step(item: int, work_ms: int) -> int:
    """One of the parallel steps: optionally busy for a while, then return its item.

    Args:
        item: this step's item.
        work_ms: milliseconds of busy work.

    Returns:
        The item.
    """
    import time

    end = time.monotonic() + work_ms / 1000
    while time.monotonic() < end:
        pass
    return int(item)


@dsl.component(base_image=BASE_IMAGE)
def fan_join(items: list) -> int:
    """Join the fan-out.

    Args:
        items: every parallel step's output.

    Returns:
        How many steps reported.
    """
    return len(items)


@dsl.component(base_image=BASE_IMAGE, packages_to_install=[SKLEARN])
def train_model(test_fraction: float, max_iter: int, seed: int, metrics: Output[Metrics]) -> float:
    """Fit a logistic regression on iris (bundled with scikit-learn) and log its accuracy.

    Args:
        test_fraction: fraction of the data held out for evaluation.
        max_iter: the solver's iteration cap.
        seed: seed of the split.
        metrics: accuracy and sample counts.

    Returns:
        The held-out accuracy.
    """
    from sklearn.datasets import load_iris
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split

    x, y = load_iris(return_X_y=True)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=test_fraction, random_state=seed)
    model = LogisticRegression(max_iter=max_iter).fit(x_tr, y_tr)
    accuracy = float(model.score(x_te, y_te))
    metrics.log_metric("accuracy", accuracy)
    metrics.log_metric("train_samples", len(y_tr))
    return accuracy


@dsl.component(base_image=BASE_IMAGE)
def check_accuracy(accuracy: float, threshold: float, metrics: Input[Metrics]) -> str:
    """Fail the run if the model is worse than the threshold.

    Args:
        accuracy: the held-out accuracy.
        threshold: the least accuracy accepted.
        metrics: the training metrics (kept as an input so lineage shows them).

    Returns:
        "pass".
    """
    if accuracy < threshold:
        raise ValueError(f"accuracy {accuracy:.3f} is below the threshold {threshold}")
    return "pass"


def _placed(task, node_selector):
    kubernetes.add_node_selector_json(task, node_selector)
    task.set_caching_options(False)  # a benchmark measures work, never a cache hit
    return task


@dsl.pipeline(name="kfp-bench-noop", description="One step that does nothing.")
def noop(node_selector: dict = {}):  # noqa: B006 - a pipeline default, never mutated
    _placed(noop_step(), node_selector)


@dsl.pipeline(name="kfp-bench-fanout", description="K parallel steps and a join.")
def fanout(width: int = 4, work_ms: int = 0, node_selector: dict = {}):  # noqa: B006
    items = _placed(fan_items(width=width), node_selector)
    with dsl.ParallelFor(items.output) as item:
        step = _placed(fan_step(item=item, work_ms=work_ms), node_selector)
    _placed(fan_join(items=dsl.Collected(step.output)), node_selector)


@dsl.pipeline(name="kfp-bench-train", description="Train and check a classifier on iris.")
def train(
    test_fraction: float = 0.25,
    max_iter: int = 200,
    seed: int = 0,
    threshold: float = 0.8,
    node_selector: dict = {},  # noqa: B006
):
    fit = _placed(
        train_model(test_fraction=test_fraction, max_iter=max_iter, seed=seed), node_selector
    )
    _placed(
        check_accuracy(
            accuracy=fit.outputs["Output"], threshold=threshold, metrics=fit.outputs["metrics"]
        ),
        node_selector,
    )
