"""Step 3: the memory plan, the safe-settings probe and the advanced launch options."""
