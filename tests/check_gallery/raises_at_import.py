"""Broken file: raises at import."""


def helper():
    return undefined_name


helper()
