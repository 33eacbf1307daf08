"""Small shared widgets: memory bars, status icons, collapsible sections."""
