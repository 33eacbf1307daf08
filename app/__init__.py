"""GGUF Launcher: run a local GGUF model with llama.cpp safely."""

__version__ = "0.1.0"
