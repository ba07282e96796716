"""Which method when: shift descriptors of a sample, regime maps and a per-sample method selector
(docs/regimes.md)."""
