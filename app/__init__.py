"""GGUF Launcher: run a local GGUF model with llama.cpp safely."""

__version__ = "0.1.0"

# A process that never configures the app's log (a probe child, a library user) must not print our warnings to
# stderr through Python's last-resort handler: the parent may be reading that stderr. app.core.app_log adds the file.
import logging as _logging

_logging.getLogger(__name__).addHandler(_logging.NullHandler())
