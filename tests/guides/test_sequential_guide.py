"""keras-io guide "The Sequential model" (fchollet), rewritten for nodeweave.

Each section of the guide is one test; the code is the guide's with ``keras`` ->
``engine`` and ``keras.layers`` -> ``layers`` (``tf.ones`` -> ``np.ones``).
"""

import numpy as np

import engine
import engine.training.losses
import layers


def test_a_sequential_model_is_a_chain_of_layer_calls():
    model = engine.Sequential(
        [
            layers.Dense(2, activation="relu", name="layer1"),
            layers.Dense(3, activation="relu", name="layer2"),
            layers.Dense(4, name="layer3"),
        ]
    )
    x = np.ones((3, 3))
    y = model(x)

    layer1 = layers.Dense(2, activation="relu", name="layer1")
    layer2 = layers.Dense(3, activation="relu", name="layer2")
    layer3 = layers.Dense(4, name="layer3")
    layer3(layer2(layer1(x)))
    for layer, twin in zip([layer1, layer2, layer3], model.layers):
        layer.set_weights(twin.get_weights())

    assert y.shape == (3, 4)
    np.testing.assert_allclose(layer3(layer2(layer1(x))), y, rtol=1e-6)


def test_creating_a_sequential_model():
    model = engine.Sequential(
        [
            layers.Dense(2, activation="relu"),
            layers.Dense(3, activation="relu"),
            layers.Dense(4),
        ]
    )
    assert [layer.name for layer in model.layers] == ["dense", "dense_1", "dense_2"]

    model = engine.Sequential()
    model.add(layers.Dense(2, activation="relu"))
    model.add(layers.Dense(3, activation="relu"))
    model.add(layers.Dense(4))
    popped = model.layers[-1]
    model.pop()
    assert len(model.layers) == 2
    assert popped not in model.layers

    model = engine.Sequential(name="my_sequential")
    model.add(layers.Dense(2, activation="relu", name="layer1"))
    model.add(layers.Dense(3, activation="relu", name="layer2"))
    model.add(layers.Dense(4, name="layer3"))
    assert model.name == "my_sequential"
    assert [layer.name for layer in model.layers] == ["layer1", "layer2", "layer3"]


def test_layers_create_their_weights_on_first_call():
    layer = layers.Dense(3)
    assert layer.weights == []

    x = np.ones((1, 4))
    layer(x)
    assert [w.shape for w in layer.weights] == [(4, 3), (3,)]


def test_an_unbuilt_sequential_model_builds_on_first_call(capsys):
    model = engine.Sequential(
        [
            layers.Dense(2, activation="relu"),
            layers.Dense(3, activation="relu"),
            layers.Dense(4),
        ]
    )  # No weights at this stage!
    assert not model.built

    x = np.ones((1, 4))
    model(x)
    assert len(model.weights) == 6
    model.summary()
    assert "Total params: 35" in capsys.readouterr().out  # (4*2+2) + (2*3+3) + (3*4+4)


def test_an_input_object_first_gives_a_summary_while_adding(capsys):
    model = engine.Sequential()
    model.add(engine.Input(shape=(4,)))
    model.add(layers.Dense(2, activation="relu"))
    model.summary()

    assert "(None, 2)" in capsys.readouterr().out
    assert len(model.layers) == 1  # the Input is not a layer of the model
    assert [w.shape for w in model.weights] == [(4, 2), (2,)]


def test_input_shape_argument_on_the_first_layer(capsys):
    model = engine.Sequential()
    model.add(layers.Dense(2, activation="relu", input_shape=(4,)))
    model.summary()

    assert "(None, 2)" in capsys.readouterr().out
    # Built with a predefined input shape: weights exist before any data is seen.
    assert model.built
    assert [w.shape for w in model.weights] == [(4, 2), (2,)]
    assert model.output_shape == (None, 2)


def conv_stack():
    model = engine.Sequential()
    model.add(engine.Input(shape=(250, 250, 3)))  # 250x250 RGB images
    model.add(layers.Conv2D(32, 5, strides=2, activation="relu"))
    model.add(layers.Conv2D(32, 3, activation="relu"))
    model.add(layers.MaxPooling2D(3))
    first_shape = model.output_shape

    model.add(layers.Conv2D(32, 3, activation="relu"))
    model.add(layers.Conv2D(32, 3, activation="relu"))
    model.add(layers.MaxPooling2D(3))
    model.add(layers.Conv2D(32, 3, activation="relu"))
    model.add(layers.Conv2D(32, 3, activation="relu"))
    model.add(layers.MaxPooling2D(2))
    second_shape = model.output_shape

    model.add(layers.GlobalMaxPooling2D())
    model.add(layers.Dense(10))
    return model, first_shape, second_shape


def test_add_and_summary_debugging_workflow(capsys):
    model, first_shape, second_shape = conv_stack()
    model.summary()

    assert first_shape == (None, 40, 40, 32)
    assert second_shape == (None, 4, 4, 32)  # now 4x4 feature maps: time for global pooling
    assert model.output_shape == (None, 10)
    assert "(None, 40, 40, 32)" in capsys.readouterr().out


def test_feature_extraction_from_every_layer():
    initial_model = engine.Sequential(
        [
            engine.Input(shape=(250, 250, 3)),
            layers.Conv2D(32, 5, strides=2, activation="relu"),
            layers.Conv2D(32, 3, activation="relu"),
            layers.Conv2D(32, 3, activation="relu"),
        ]
    )
    feature_extractor = engine.Model(
        inputs=initial_model.inputs,
        outputs=[layer.output for layer in initial_model.layers],
    )
    x = np.ones((1, 250, 250, 3))
    features = feature_extractor(x)

    assert [f.shape for f in features] == [(1, 123, 123, 32), (1, 121, 121, 32), (1, 119, 119, 32)]
    np.testing.assert_allclose(features[-1], initial_model(x), rtol=1e-5)


def test_feature_extraction_from_one_layer():
    initial_model = engine.Sequential(
        [
            engine.Input(shape=(250, 250, 3)),
            layers.Conv2D(32, 5, strides=2, activation="relu"),
            layers.Conv2D(32, 3, activation="relu", name="my_intermediate_layer"),
            layers.Conv2D(32, 3, activation="relu"),
        ]
    )
    feature_extractor = engine.Model(
        inputs=initial_model.inputs,
        outputs=initial_model.get_layer(name="my_intermediate_layer").output,
    )
    x = np.ones((1, 250, 250, 3))
    features = feature_extractor(x)
    assert features.shape == (1, 121, 121, 32)


def test_transfer_learning_freezes_all_layers_but_the_last(tmp_path):
    def make_model():
        return engine.Sequential([
            engine.Input(shape=(784,)),
            layers.Dense(32, activation="relu"),
            layers.Dense(32, activation="relu"),
            layers.Dense(32, activation="relu"),
            layers.Dense(10),
        ])

    pretrained = make_model()
    pretrained.save_weights(str(tmp_path / "pretrained.weights.npz"))
    model = make_model()
    # Presumably you would want to first load pre-trained weights.
    model.load_weights(str(tmp_path / "pretrained.weights.npz"))
    before = model.get_weights()

    # Freeze all layers except the last one.
    for layer in model.layers[:-1]:
        layer.trainable = False

    x = np.random.rand(64, 784).astype("float32")
    y = (x[:, :10] > 0.5).argmax(axis=1)
    model.compile(optimizer="adam", loss=engine.training.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(x, y, epochs=4, verbose=0)

    after = model.get_weights()
    assert history.history["loss"][-1] < history.history["loss"][0]
    for old, new in zip(before[:-2], after[:-2]):
        np.testing.assert_array_equal(old, new)  # only the last layer was updated
    assert not np.allclose(before[-2], after[-2])
    np.testing.assert_array_equal(before[0], pretrained.get_weights()[0])


def test_transfer_learning_stacks_a_pretrained_base_and_a_new_head():
    # A small convolutional base stands in for keras.applications.Xception(include_top=False, pooling="avg").
    base_input = engine.Input(shape=(32, 32, 3))
    x = layers.Conv2D(8, 3, activation="relu")(base_input)
    x = layers.Conv2D(8, 3, activation="relu")(x)
    base_model = engine.Model(base_input, layers.GlobalAveragePooling2D()(x), name="base_model")

    # Freeze the base model
    base_model.trainable = False

    # Use a Sequential model to add a trainable classifier on top
    model = engine.Sequential([
        base_model,
        layers.Dense(1000),
    ])
    model.compile(optimizer="adam", loss=engine.training.losses.SparseCategoricalCrossentropy(from_logits=True))

    images = np.random.rand(32, 32, 32, 3).astype("float32")
    labels = np.random.randint(1000, size=32)
    base_weights = base_model.get_weights()
    history = model.fit(images, labels, epochs=4, verbose=0)

    assert history.history["loss"][-1] < history.history["loss"][0]
    for old, new in zip(base_weights, base_model.get_weights()):
        np.testing.assert_array_equal(old, new)
    assert model.output_shape == (None, 1000)
