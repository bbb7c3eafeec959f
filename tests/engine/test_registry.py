import pytest

from engine import Layer, register_serializable
from engine.files.registry import custom_object_scope, lookup, registered_name
from layers import Dense


def test_builtin_layers_are_registered_by_class_name():
    assert lookup("Dense") is Dense
    assert registered_name(Dense) == "Dense"
    assert lookup("BinaryOp").__module__ == "engine.network.ops"


def test_an_unknown_type_says_how_to_pass_or_register_it_then_the_closest_match():
    with pytest.raises(ValueError) as info:
        lookup("Dens")
    assert str(info.value) == (
        "Unknown layer type: 'Dens'. If it is yours, pass it to the call that loads it, as "
        "custom_objects={'Dens': Dens}, or register it once with @engine.register_serializable(). "
        "Did you mean 'Dense'?")
    with pytest.raises(ValueError, match=r"custom_objects=\{'pkg>Zyxxy': Zyxxy\}.* \(\d+ layer types are known\.\)$"):
        lookup("pkg>Zyxxy")


def test_user_classes_register_with_a_package_and_only_once():
    @register_serializable(package="test_pkg")
    class Doubler(Layer):
        def call(self, inputs):
            return inputs * 2.0

    assert lookup("test_pkg>Doubler") is Doubler
    assert registered_name(Doubler) == "test_pkg>Doubler"
    with pytest.raises(ValueError, match="'test_pkg>Doubler' is already registered"):
        @register_serializable(package="test_pkg")
        class Doubler(Layer):  # noqa: F811
            pass


def test_custom_objects_scope():
    class Local(Layer):
        pass

    with pytest.raises(ValueError, match="Unknown layer type: 'Local'"):
        lookup("Local")
    with custom_object_scope({"Local": Local}):
        assert lookup("Local") is Local
    assert lookup("Local", custom_objects={"Local": Local}) is Local


def test_scopes_and_safe_mode_belong_to_the_thread_that_entered_them():
    import threading

    from engine.files.registry import loading_options, safe_mode

    class Local(Layer):
        pass

    inside, entered, leave = {}, threading.Event(), threading.Event()

    def unsafe_load():
        with custom_object_scope({"Local": Local}), loading_options(safe_mode=False):
            entered.set()
            leave.wait()

    thread = threading.Thread(target=unsafe_load)
    thread.start()
    entered.wait()
    inside["safe"] = safe_mode()
    with pytest.raises(ValueError, match="Unknown layer type: 'Local'"):
        lookup("Local")
    leave.set()
    thread.join()
    assert inside == {"safe": True}
    with loading_options(safe_mode=False):
        with loading_options(safe_mode=None):  # None keeps the enclosing load's choice
            assert safe_mode() is False
        with loading_options(safe_mode=True):
            assert safe_mode() is True
    assert safe_mode() is True
    with pytest.raises(TypeError, match="safe_mode must be True, False or None, received 'no'"), \
            loading_options(safe_mode="no"):
        pass
