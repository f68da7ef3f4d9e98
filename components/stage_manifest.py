"""Fetch the child pipeline's manifest, check it and its run parameters, and keep it."""

from kfp import dsl
from kfp.dsl import Dataset, Output
from kfp_bench.components._embed import BASE_IMAGE, engine, packages


@dsl.component(
    base_image=BASE_IMAGE,
    packages_to_install=packages("kfp"),
    embedded_artifact_path=engine("kfp/manifest.py"),
)
def stage_manifest(
    pipeline: str,
    run_parameters: dict,
    run_node_selector: dict,
    enabled: bool,
    manifest: Output[Dataset],
):
    """Resolve the child manifest (a bundled name or a URL) and keep the exact bytes that the
    runs step uploads, so the run's lineage shows what was benchmarked.

    Args:
        pipeline: noop, fanout, train or the URL of a compiled pipeline.
        run_parameters: the child runs' parameters, checked against the manifest.
        run_node_selector: the child runs' node selector (their node_selector parameter).
        enabled: false when the runs benchmark is switched off: the step only says so.
        manifest: the compiled child pipeline (YAML).
    """
    from kfp_bench.failpoint import fail_point
    from kfp_bench.kfp.manifest import load_manifest
    from kfp_bench.params import BenchParams

    p = BenchParams(
        pipeline=pipeline, run_parameters=run_parameters, run_node_selector=run_node_selector
    )
    if not enabled:
        print("runs benchmark switched off (run_benchmark=false)")
        open(manifest.path, "w").close()
        return
    m = load_manifest(p.manifest_source())
    m.check_params(p.child_params())
    with open(manifest.path, "wb") as f:
        f.write(m.data)
    manifest.metadata.update(pipeline=m.name, source=pipeline, bytes=len(m.data))
    print(f"manifest {m.name!r} from {pipeline}: {len(m.data)} bytes")
    fail_point("stage_manifest")
