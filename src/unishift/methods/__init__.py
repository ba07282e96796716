"""Methods of the three tasks, the task interfaces and the adaptations between them."""
