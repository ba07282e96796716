"""Calibrators: calibrated posteriors (n x k) for every item of an unlabelled test sample. One
module per calibrator or family; the registry scans every module of this package (docs/methods.md,
"Adding a method")."""
