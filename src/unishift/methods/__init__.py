"""Methods of the three tasks, their interfaces and the adaptations between them."""
