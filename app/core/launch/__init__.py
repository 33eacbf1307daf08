"""What to launch: the launch config, which engines exist on this machine, and free ports."""
