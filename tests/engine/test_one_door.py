"""The one-door rule (engine/network/one_door.py): call and forward checked when a Layer class
is made, call derived from a forward alone, positional engine keywords bound by name."""

import inspect

import numpy as np
import pytest

from engine import Layer


def test_a_forward_whose_parameters_differ_from_call_fails_when_the_class_is_made():
    with pytest.raises(TypeError) as raised:
        class Shifted(Layer):
            def call(self, inputs, mask=None):
                return inputs

            def forward(self, inputs, training=True, mask=None):
                return inputs, None
    message = str(raised.value)
    assert "Shifted' defines" in message
    assert "call(inputs, mask=None)" in message and "forward(inputs, training=True, mask=None)" in message
    assert "def forward(self, inputs, mask=None, training=True)" in message


@pytest.mark.parametrize("call, forward", [
    (lambda self, inputs, mask=None: None, lambda self, inputs, mask=True, training=True: None),  # a default
    (lambda self, inputs, state=None, training=False: None, lambda self, inputs, training=True, state=None: None),
    (lambda self, inputs, mask=None: None, lambda self, inputs, mask=None: None),  # no training to take
    (lambda self, x: None, lambda self, inputs, training=True: None),  # a name
    (lambda self, inputs, *, mask=None: None, lambda self, inputs, mask=None, training=True: None),  # a kind
], ids=["default", "order", "no training", "name", "kind"])
def test_each_difference_is_refused(call, forward):
    with pytest.raises(TypeError, match="whose parameters differ"):
        type("Odd", (Layer,), {"call": call, "forward": forward})


def test_agreeing_doors_are_accepted_and_a_forward_alone_gives_call():
    class Gate(Layer):
        def call(self, inputs, gate=None, training=False):
            return inputs * gate

        def forward(self, inputs, gate=None, training=True):
            return inputs * gate, None

    class Scaled(Layer):  # call takes no training: forward takes it last
        def call(self, inputs, scale=None):
            return inputs * scale

        def forward(self, inputs, scale=None, *, training=True):
            return inputs * scale, None

    class Noisy(Layer):  # forward alone: call is forward(...)[0], not training unless asked
        def forward(self, inputs, training=True):
            return inputs + (1.0 if training else 0.0), None

        def backward(self, cache, grad_outputs):
            return grad_outputs, {}

    x = np.ones((2, 3), "float32")
    np.testing.assert_array_equal(Gate()(x, x * 2), x * 2)
    np.testing.assert_array_equal(Scaled()(x, 3.0), x * 3)
    assert str(inspect.signature(Noisy.call)) == "(self, inputs, training=False)"
    np.testing.assert_array_equal(Noisy()(x), x)
    np.testing.assert_array_equal(Noisy()(x, training=True), x + 1)


def test_an_argument_given_by_position_and_by_keyword_is_refused():
    class Masked(Layer):
        def call(self, inputs, mask=None):
            return inputs

    x = np.ones((2, 3), "float32")
    with pytest.raises(TypeError, match=r"Layer 'twice' \(Masked\) got \['mask'\] both by position and by keyword"):
        Masked(name="twice")(x, x > 0, mask=x > 0)
