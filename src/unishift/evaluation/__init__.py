"""Scoring methods: the evaluation of a method on every sample of a setup
(:mod:`~unishift.evaluation.evaluate`), the layout of its per-sample records
(:mod:`~unishift.evaluation.records`), the error measures (:mod:`~unishift.evaluation.metrics`) and
the statistics that compare methods (:mod:`~unishift.evaluation.stats`)."""
