"""A tiny unishift plugin (see README.md)."""
