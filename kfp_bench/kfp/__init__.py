"""The KFP driver: upload, spawn, poll and clean up runs, as timed records. Never prints.

``driver.run_benchmark`` runs the whole benchmark in one call; ``phases.upload``, ``spawn`` and
``poll`` are the same steps as separate phases, joined by a ``BenchmarkHandle`` and an output
directory; ``cleanup.sweep`` deletes what a benchmark id left. ``options`` holds their options,
``api`` the timed KFP REST client, ``rest`` its requests over urllib3, ``auth`` the token,
``manifest`` the pipeline files.
"""
