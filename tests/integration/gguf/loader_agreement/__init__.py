"""Helpers for the doctor-vs-loader agreement test: a long-lived child that runs llama.cpp's real loader,
and a byte-level GGUF editor with seeded, realistic corruptions."""
