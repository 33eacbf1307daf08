"""What the operating system must provide before the window can open (no Qt imported here)."""
