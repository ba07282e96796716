"""Data sources: UCI tables (label shift) and sentiment text (covariate shift)."""
