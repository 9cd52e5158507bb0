"""Broken file: an endless loop at import."""
while True:
    pass
