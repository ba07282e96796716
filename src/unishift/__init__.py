"""unishift: calibration, quantification and classifier accuracy prediction under dataset shift."""

__version__ = "0.1.0"
