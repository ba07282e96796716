"""The adaptations between tasks: the adapters (``to_calibration``, ``to_quantification``,
``to_cap``) and the table that derives every adapted method from the registered ones (``table``)."""
