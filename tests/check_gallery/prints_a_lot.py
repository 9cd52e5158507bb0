"""Correct, but chatty: prints at import and in every backward(), and reads stdin; the grader must not care."""
import sys

print("loading my engine!")


class Value:
    def __init__(self, data, _children=()):
        self.data = data
        self.grad = 0
        self._prev = tuple(_children)
        self._backward = lambda: None

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other))

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __radd__(self, other):
        return self + other

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other))

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def __rmul__(self, other):
        return self * other

    def backward(self):
        print("backward!", sys.stdin.read())
        topo, seen, stack = [], set(), [(self, False)]
        while stack:
            node, done = stack.pop()
            if done:
                topo.append(node)
            elif node not in seen:
                seen.add(node)
                stack.append((node, True))
                stack.extend((p, False) for p in node._prev)
        for node in topo:
            node.grad = 0
        self.grad = 1
        for node in reversed(topo):
            node._backward()
