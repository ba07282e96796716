"""The adaptations between tasks: the adapters and the table that derives the adapted methods."""
