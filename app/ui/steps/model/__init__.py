"""Step 2: open or fetch a model, and show what the file checks found."""
