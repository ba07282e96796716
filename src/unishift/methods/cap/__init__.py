"""Classifier accuracy predictors (the registry scans every module of this package)."""
