"""The engines: build llama.cpp for this processor, record how, and prove it runs quantized models."""
