"""Get a model: search GGUF repositories on the Hub, list a repository's files with their published SHA-256, and
give each file a fit verdict for this computer from its header, read with HTTP range requests.

Nothing here is imported when the app starts: the window and the CLI import it when the user searches.
"""
