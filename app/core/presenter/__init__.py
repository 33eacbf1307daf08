"""Presenter mode: the pre-flight checklist before a demo (``preflight``), keeping the screen awake while presenting
(``awake``), and Recover: the server back with the last good settings and the last question asked again
(``recover``)."""
