"""GGUF files other apps already downloaded (Ollama, LM Studio, Jan, the Hugging Face cache, llama.cpp's cache) and
folders the user added: found by their known layouts, read only as far as the header. Opening one never copies it."""
