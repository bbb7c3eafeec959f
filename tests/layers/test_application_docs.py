"""``documented`` and ``variant`` (layers/applications/_builders.py), which write the architecture builders
and their docstrings: every builder keeps Keras' signature, each variant belongs to its architecture's
module (so its example runs there), and every docstring describes every parameter."""

import doctest
import inspect

import pytest

from layers import applications as ours
from layers.applications import densenet, efficientnet
from layers.applications._builders import documented, variant

keras = pytest.importorskip("keras")

BUILDERS = [name for name in ours.__all__ if inspect.isfunction(getattr(ours, name))]


def test_there_are_the_forty_builders():
    assert len(BUILDERS) == 40


@pytest.mark.parametrize("builder", BUILDERS)
def test_builder_has_kerass_signature_and_documents_each_parameter(builder):
    function = getattr(ours, builder)
    signature = inspect.signature(function)
    assert signature == inspect.signature(getattr(keras.applications, builder))
    assert function.__name__ == function.__qualname__ == builder
    docstring = inspect.getdoc(function)
    args = docstring.split("Args:\n")[1].split("\n\n")[0]
    described = [line.split(":")[0].strip() for line in args.splitlines() if not line.startswith("        ")]
    assert described == list(signature.parameters)
    assert docstring.startswith(f"{builder} as ``keras.applications.{builder}`` builds it")


def test_a_variant_belongs_to_its_architectures_module_where_its_example_is_found():
    assert efficientnet.EfficientNetB4.__module__ == "layers.applications.efficientnet"
    tests = {test.name: test for test in doctest.DocTestFinder().find(densenet) if test.examples}
    example = tests["layers.applications.densenet.DenseNet201"]
    assert example.globs is not None and example.globs["DenseNet201"] is densenet.DenseNet201
    assert "((None, 224, 224, 3), (None, 1000))" in example.examples[-1].want


def test_a_variant_passes_its_settings_and_the_callers_arguments_in_keras_order():
    calls = []

    def architecture(builder, depth, include_top, weights, input_tensor, input_shape, pooling, classes,
                     classifier_activation, name):
        calls.append((builder, depth, include_top, weights, input_tensor, input_shape, pooling, classes,
                      classifier_activation, name))

    build = variant("NetB3", architecture, 7, default_size=300, notes="Seven blocks.")
    build(False, None, pooling="avg", classes=5)
    assert calls == [("NetB3", 7, False, None, None, None, "avg", 5, "softmax", "netb3")]
    docstring = inspect.getdoc(build)
    assert "Seven blocks." in docstring
    assert "by default (300, 300, 3) with the classifier" in docstring
    assert ">>> model = NetB3(weights=None)" in docstring


def test_documented_writes_the_common_words_with_the_sizes_and_the_given_words():
    @documented(">>> Net", min_size=75, default_size=299, alpha="the width multiplier.")
    def Net(input_shape=None, alpha=1.0, weights="imagenet"):
        pass

    args = Net.__doc__.split("Args:\n")[1].split("\n\n")[0]
    assert " ".join(args.split()).startswith("input_shape: ``(height, width, channels)``, at least 75x75; by default "
                                             "(299, 299, 3) with the classifier and (None, None, 3) without. alpha:")
    assert "    alpha: the width multiplier." in args.splitlines()
    assert args.index("input_shape:") < args.index("alpha:") < args.index("weights:")


def test_documented_refuses_a_parameter_without_words_and_words_without_a_parameter():
    with pytest.raises(TypeError, match=r"documented\(Net\).*received words for \['depth'\] that Net does not take "
                                        r"and none for \['alpha'\]"):
        @documented(">>> Net", depth="blocks per stage.")
        def Net(alpha=1.0, name="net"):
            pass
