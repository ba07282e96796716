"""Quantifiers: estimate the class prevalence vector of an unlabelled sample (one module per method
or family; the registry scans every module of this package)."""
