"""The memory plan: weights, KV cache and compute buffers per device, and how many layers fit on each GPU."""
