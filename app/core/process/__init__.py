"""Child processes the app starts: spawn and stop whole process trees, and remember them so none outlives the app."""
