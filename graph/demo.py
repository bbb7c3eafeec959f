"""The main job: train a functional CNN on scikit-learn's digits, show its graph
and how it trained, and save it."""

import time
from pathlib import Path

OUTPUT = Path("demo_output")


def load_digits_split(test_fraction=0.2, seed=0):
    """scikit-learn's bundled 8x8 digits (offline), scaled to [0, 1], as
    ((x_train, y_train), (x_test, y_test)) with a fixed, stratified held-out split."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    images = (digits.images / 16.0).astype("float32")[..., None]
    x_train, x_test, y_train, y_test = train_test_split(
        images, digits.target, test_size=test_fraction, random_state=seed, stratify=digits.target)
    return (x_train, y_train), (x_test, y_test)


def build_digits_model():
    """A small CNN with a branch and a merge, so its graph is not a chain."""
    from engine import Input, Model
    from layers import BatchNormalization, Conv2D, Dense, Dropout, Flatten, MaxPooling2D, add

    pixels = Input(shape=(8, 8, 1), name="pixels")
    stem = BatchNormalization(name="stem_norm")(Conv2D(32, 3, padding="same", activation="relu", name="stem")(pixels))
    wide = Conv2D(32, 3, padding="same", activation="relu", name="branch_3x3")(stem)
    narrow = Conv2D(32, 1, activation="relu", name="branch_1x1")(stem)
    merged = MaxPooling2D(2, name="pool")(add([wide, narrow], name="merge"))
    hidden = Dense(64, activation="relu", name="hidden")(Dropout(0.25, name="dropout")(Flatten(name="flatten")(merged)))
    return Model(pixels, Dense(10, activation="softmax", name="digit")(hidden), name="digits_cnn")


def run_demo(epochs=12, print_fn=print):
    from engine.utils import set_random_seed
    from graph import print_tabular

    set_random_seed(0)
    (x_train, y_train), (x_test, y_test) = load_digits_split()
    model = build_digits_model()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.summary(print_fn=print_fn)
    print_fn("\nExecution plan (one row per layer call; inputs as layer[node_index][tensor_index]):")
    print_tabular(model, print_fn=print_fn)

    print_fn(f"\nTraining on {len(x_train)} digits ({len(x_test)} held out for the test):")
    start = time.perf_counter()
    model.fit(x_train, y_train, epochs=epochs, batch_size=32, validation_split=0.1, verbose=1)
    seconds = time.perf_counter() - start
    loss, accuracy = model.evaluate(x_test, y_test, verbose=0)
    print_fn(f"\nTest accuracy: {accuracy:.4f} (loss {loss:.4f}) after {epochs} epochs in {seconds:.1f} s")

    OUTPUT.mkdir(exist_ok=True)
    image, view = _draw(model)
    model.save(OUTPUT / "digits_cnn.nw")
    print_fn(f"Graph image: {image.resolve()}")
    print_fn(f"Interactive view (open it in a browser): {view.resolve()}")
    print_fn(f"Saved model: {(OUTPUT / 'digits_cnn.nw').resolve()} (try: nodeweave summary {OUTPUT / 'digits_cnn.nw'})")
    return model, accuracy


def _draw(model):
    """The graph as a picture (``dot``'s, or the built-in layout's without it) and as
    the interactive view, its boxes coloured by FLOPs; returns both paths."""
    from graph import plot_model, save_html

    image, view = OUTPUT / "digits_cnn.png", OUTPUT / "digits_cnn.html"
    plot_model(model, to_file=str(image), show_shapes=True, show_params=True)
    save_html(model, view, node_data="flops")
    return image, view
