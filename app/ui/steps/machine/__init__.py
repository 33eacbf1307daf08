"""Step 1: what this machine has, and the engine row with its rebuild flow."""
