"""The chat pane: streaming transcript, parameters, context meter, saved conversations."""
