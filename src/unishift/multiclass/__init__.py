"""The multiclass regime: task interfaces, methods and the six adaptations for k >= 2 classes.

See docs/multiclass.md for the mathematics and ``unishift.multiclass.catalogue`` for the methods.
"""
