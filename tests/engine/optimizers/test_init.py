import keras
import pytest

from engine import optimizers
from engine.training.optimizers import schedules


@pytest.mark.parametrize("name, cls", [("sgd", "SGD"), ("adam", "Adam"), ("adamw", "AdamW"), ("rmsprop", "RMSprop"),
                                       ("adagrad", "Adagrad"), ("adamax", "Adamax"), ("nadam", "Nadam")])
def test_get_by_name_has_keras_defaults(name, cls):
    for identifier in (name, cls):
        optimizer = optimizers.get(identifier)
        assert type(optimizer).__name__ == cls
        expected = keras.optimizers.get(name).get_config()
        for key, value in optimizer.get_config().items():
            if key != "name":
                assert value == pytest.approx(expected[key]), key


def test_get_instance_and_serialized_config():
    optimizer = optimizers.Adam(learning_rate=schedules.CosineDecay(0.1, 100, warmup_target=0.2, warmup_steps=5),
                                amsgrad=True, clipvalue=0.5, name="opt")
    assert optimizers.get(optimizer) is optimizer
    config = optimizers.serialize(optimizer)
    assert config["class_name"] == "Adam"
    assert config["config"]["learning_rate"]["class_name"] == "CosineDecay"
    clone = optimizers.get(config)
    assert clone.get_config() == optimizer.get_config()
    assert clone.learning_rate == 0.1 and clone.amsgrad and clone.clipvalue == 0.5


def test_unknown_name_suggests_the_closest():
    with pytest.raises(ValueError, match=r"Unknown optimizer: 'adamm' \(known: .*\). Did you mean 'adam'\?"):
        optimizers.get("adamm")
    with pytest.raises(TypeError, match="Could not interpret optimizer identifier 3"):
        optimizers.get(3)
