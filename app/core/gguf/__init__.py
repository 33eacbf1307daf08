"""GGUF inspector and validator: a bounded reader for untrusted files plus typed checks.

``read_model_info(path) -> ModelInfo`` raises ``GGUFError`` for a file it cannot read;
``validate(path, ...) -> ValidationReport`` never raises for a bad file, it reports checks.

Import from the module that defines a name (``app.core.gguf.reader``, ``.validate``, ...): the package re-exports
nothing, so importing one small module of it (naming, errors) does not load the validator before the window paints.
"""
