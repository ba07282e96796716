"""Methods of the three tasks for any number of classes, the task interfaces and the adaptations
between them."""
