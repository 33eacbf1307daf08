"""Plain-Python core of GGUF Launcher. Nothing in this package may import Qt."""
