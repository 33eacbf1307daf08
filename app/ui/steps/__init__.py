"""The four steps of the window, one folder each: machine, model, settings, server."""
