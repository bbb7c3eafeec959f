"""keras-io example "Image similarity estimation using a Siamese Network with a contrastive
loss" (Mehdi), rewritten with ``import nodeweave as keras`` on a small synthetic MNIST.

The pair making, the shared tower, the ``Lambda`` merging the two embeddings by a Euclidean
distance written with ``keras.ops``, and the contrastive loss (a closure over ``margin``,
also in ``keras.ops``) are the example's. Pairs: 2 per image instead of one per image per
class's partner, so the test stays small.
"""

import random

import numpy as np

import nodeweave as keras
from nodeweave import layers, ops
from tests.guides import synthetic

epochs = 3
batch_size = 16
margin = 1  # Margin for contrastive loss.


def make_pairs(x, y):
    """Creates a tuple containing image pairs with corresponding label (1: different, 0: same)."""
    num_classes = max(y) + 1
    digit_indices = [np.where(y == i)[0] for i in range(num_classes)]

    pairs = []
    labels = []

    for idx1 in range(len(x)):
        # add a matching example
        x1 = x[idx1]
        label1 = y[idx1]
        idx2 = random.choice(digit_indices[label1])
        x2 = x[idx2]

        pairs += [[x1, x2]]
        labels += [0]

        # add a non-matching example
        label2 = random.randint(0, num_classes - 1)
        while label2 == label1:
            label2 = random.randint(0, num_classes - 1)

        idx2 = random.choice(digit_indices[label2])
        x2 = x[idx2]

        pairs += [[x1, x2]]
        labels += [1]

    return np.array(pairs), np.array(labels).astype("float32")


# Provided two tensors t1 and t2
# Euclidean distance = sqrt(sum(square(t1-t2)))
def euclidean_distance(vects):
    x, y = vects
    sum_square = ops.sum(ops.square(x - y), axis=1, keepdims=True)
    return ops.sqrt(ops.maximum(sum_square, keras.backend.epsilon()))


def build_siamese():
    input = keras.layers.Input((28, 28, 1))
    x = keras.layers.BatchNormalization()(input)
    x = keras.layers.Conv2D(4, (5, 5), activation="tanh")(x)
    x = keras.layers.AveragePooling2D(pool_size=(2, 2))(x)
    x = keras.layers.Conv2D(16, (5, 5), activation="tanh")(x)
    x = keras.layers.AveragePooling2D(pool_size=(2, 2))(x)
    x = keras.layers.Flatten()(x)

    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.Dense(10, activation="tanh")(x)
    embedding_network = keras.Model(input, x)

    input_1 = keras.layers.Input((28, 28, 1))
    input_2 = keras.layers.Input((28, 28, 1))

    # As mentioned above, Siamese Network share weights between
    # tower networks (sister networks). To allow this, we will use
    # same embedding network for both tower networks.
    tower_1 = embedding_network(input_1)
    tower_2 = embedding_network(input_2)

    merge_layer = keras.layers.Lambda(euclidean_distance, output_shape=(1,))([tower_1, tower_2])
    normal_layer = keras.layers.BatchNormalization()(merge_layer)
    output_layer = keras.layers.Dense(1, activation="sigmoid")(normal_layer)
    siamese = keras.Model(inputs=[input_1, input_2], outputs=output_layer)
    return siamese, embedding_network


def loss(margin=1):
    """Provides 'contrastive_loss' an enclosing scope with variable 'margin'."""

    # Contrastive loss = mean( (1-true_value) * square(prediction) +
    #                         true_value * square( max(margin-prediction, 0) ))
    def contrastive_loss(y_true, y_pred):
        square_pred = ops.square(y_pred)
        margin_square = ops.square(ops.maximum(margin - (y_pred), 0))
        return ops.mean((1 - y_true) * square_pred + (y_true) * margin_square)

    return contrastive_loss


def prepared_pairs():
    random.seed(0)
    (x_train_val, y_train_val), (x_test, y_test) = synthetic.mnist_load_data(num_train=200, num_test=60)
    x_train_val = x_train_val.astype("float32") / 255
    x_test = x_test.astype("float32") / 255
    pairs_train, labels_train = make_pairs(x_train_val[:140], y_train_val[:140])
    pairs_val, labels_val = make_pairs(x_train_val[140:], y_train_val[140:])
    pairs_test, labels_test = make_pairs(x_test, y_test)
    return (pairs_train, labels_train), (pairs_val, labels_val), (pairs_test, labels_test)


def test_the_contrastive_loss_is_the_examples_formula():
    y_true = np.array([0.0, 1.0, 1.0])
    y_pred = np.array([0.5, 0.25, 2.0])
    expected = np.mean([0.25, 0.75 ** 2, 0.0])
    np.testing.assert_allclose(keras.ops.convert_to_numpy(loss(margin=1)(y_true, y_pred)), expected, rtol=1e-6)


def test_the_two_towers_share_one_embedding_network():
    siamese, embedding_network = build_siamese()
    assert siamese.output_shape == (None, 1)
    assert embedding_network in siamese.layers
    assert len(siamese.trainable_weights) == len(embedding_network.trainable_weights) + 4


def test_the_siamese_network_trains_on_pairs_with_the_contrastive_loss():
    keras.utils.set_random_seed(0)
    (pairs_train, labels_train), (pairs_val, labels_val), (pairs_test, labels_test) = prepared_pairs()
    assert pairs_train.shape == (280, 2, 28, 28) and labels_train.mean() == 0.5
    x_train_1, x_train_2 = pairs_train[:, 0], pairs_train[:, 1]
    x_val_1, x_val_2 = pairs_val[:, 0], pairs_val[:, 1]

    siamese, _ = build_siamese()
    siamese.compile(loss=loss(margin=margin), optimizer="RMSprop", metrics=["accuracy"])
    history = siamese.fit([x_train_1, x_train_2], labels_train, validation_data=([x_val_1, x_val_2], labels_val),
                          batch_size=batch_size, epochs=epochs, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < losses[0]
    assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}

    results = siamese.evaluate([pairs_test[:, 0], pairs_test[:, 1]], labels_test, verbose=0)
    assert np.isfinite(results[0]) and 0.0 <= results[1] <= 1.0
