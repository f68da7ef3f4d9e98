"""Mergeable aggregation: HDR histograms, per-second series and load summaries (numpy), and the
runs benchmark's summary (plain Python: the KFP driver's steps install no numpy).

``hdr.Histogram``, ``series.Series``, ``load.LoadStats``, ``store`` (saved load results),
``llm.LlmStats`` (streaming LLM loads, with ``slo.Slo`` and ``token_series.TokenSeries``) and
``runs.RunsStats``; importing this package imports none of them.
"""
