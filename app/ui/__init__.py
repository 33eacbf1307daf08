"""The desktop app: widgets and Qt adapters over app.core. Nothing here holds logic of its own."""
