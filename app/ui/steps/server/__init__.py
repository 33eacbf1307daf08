"""Step 4: start, watch and restart the server; the crash card with its fix button."""
