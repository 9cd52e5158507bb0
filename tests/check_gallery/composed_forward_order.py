"""Mistake: rules run in forward order (topo, not reversed(topo)); a - b and a / b are built from +, neg, * and **, so they look wrong too, though their parts are right."""


class Value:
    def __init__(self, data, parents=()):
        self.data = float(data)
        self.grad = 0.0
        self.parents = tuple(parents)
        self._backward = lambda: None

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other))

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other))

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def __pow__(self, k):
        out = Value(self.data ** k, (self,))

        def _backward():
            self.grad += k * self.data ** (k - 1) * out.grad
        out._backward = _backward
        return out

    def __neg__(self):
        out = Value(-self.data, (self,))

        def _backward():
            self.grad += -out.grad
        out._backward = _backward
        return out
    def __sub__(self, other):  # a - b = a + (-b)
        other = other if isinstance(other, Value) else Value(other)
        return self + (-other)

    def __truediv__(self, other):  # a / b = a * b**-1
        other = other if isinstance(other, Value) else Value(other)
        return self * other ** -1

    def relu(self):
        out = Value(max(self.data, 0.0), (self,))

        def _backward():
            self.grad += (self.data > 0) * out.grad
        out._backward = _backward
        return out

    def backward(self):
        topo, visited, stack = [], set(), [(self, False)]
        while stack:
            node, done = stack.pop()
            if done:
                topo.append(node)
            elif id(node) not in visited:
                visited.add(id(node))
                stack.append((node, True))
                stack.extend((p, False) for p in node.parents)
        for node in topo:
            node.grad = 0.0
        self.grad = 1.0
        for node in topo:
            node._backward()
