"""Sub-widgets of the chat pane (transcript, parameters, context meter)."""
