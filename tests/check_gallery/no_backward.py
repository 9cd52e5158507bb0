"""Broken file: a Value without backward()."""


class Value:
    def __init__(self, data):
        self.data = data
        self.grad = 0.0
