"""The window around the steps: start-up, main window, menus, saved settings and profiles."""
