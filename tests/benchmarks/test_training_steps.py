"""The training-step benchmark's twins are the same networks, and its thread and memory switches do what they say."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks import training_steps

ROOT = Path(__file__).parents[2]
torch = pytest.importorskip("torch")


def ours_count(model):
    return sum(int(v.value.size) for v in model.trainable_weights)


def torch_count(module):
    return sum(p.numel() for p in module.parameters())


@pytest.mark.parametrize("ours, theirs", [
    (training_steps.small_resnet, training_steps.small_resnet_torch),
    (training_steps.mobilenet_blocks, training_steps.mobilenet_blocks_torch),
])
def test_convolutional_twins_have_the_same_parameters(ours, theirs):
    assert ours_count(ours()) == torch_count(theirs(torch))


def test_small_resnet_is_cifar_sized():
    assert 0.25e6 < ours_count(training_steps.small_resnet()) < 0.35e6


def test_resnet50_twin_has_keras_resnet50s_parameters():
    from layers.applications import ResNet50

    assert ours_count(ResNet50(weights=None, input_shape=(32, 32, 3))) == torch_count(
        training_steps.resnet50_torch(torch)) == 25_583_592


def test_recurrent_twins_differ_only_by_torchs_second_lstm_bias():
    assert ours_count(training_steps.recurrent("GRU", 5)) == torch_count(training_steps.recurrent_torch(torch, "GRU"))
    lstm_difference = torch_count(training_steps.recurrent_torch(torch, "LSTM")) - ours_count(
        training_steps.recurrent("LSTM", 5))
    assert lstm_difference == 4 * 128


@pytest.mark.slow
def test_gan_twins_have_the_same_parameters_and_a_step_trains_both_models():
    images = np.random.default_rng(0).uniform(size=(2, 28, 28, 1)).astype("float32")
    ours, theirs = training_steps.GanStep(images), training_steps.GanStepTorch(torch, images)
    assert ours_count(ours.generator) == torch_count(theirs.generator)
    assert ours_count(ours.discriminator) == torch_count(theirs.discriminator)
    before = [w.numpy().copy() for w in ours.generator.trainable_weights + ours.discriminator.trainable_weights]
    ours()
    after = [w.numpy() for w in ours.generator.trainable_weights + ours.discriminator.trainable_weights]
    assert all(not np.array_equal(b, a) for b, a in zip(before, after))


def test_a_contender_alone_runs_in_a_fresh_process_and_reports_its_steps_and_peak_memory():
    alone = training_steps.measure_alone("nodeweave", "small ResNet", 2, smoke=True)
    assert len(alone["seconds"]) == 2 and all(s > 0 for s in alone["seconds"])
    assert isinstance(alone["peak_mb"], float) and 0 < alone["peak_mb"] < 2000


def threads_seen(setting, code=("import os, benchmarks.training_steps as t; "
                                 "print(os.environ.get('OPENBLAS_NUM_THREADS'), t.load_torch().get_num_threads())")):
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                                              "MKL_NUM_THREADS", "NODEWEAVE_NUM_THREADS")}
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**env, "NODEWEAVE_BENCH_THREADS": setting},
                         capture_output=True, text=True, check=True)
    return run.stdout.split()


@pytest.mark.slow
def test_one_thread_pins_blas_and_torch_and_all_leaves_their_defaults():
    assert threads_seen("1") == ["1", "1"]
    torch_default = threads_seen("all", "import torch; print(torch.get_num_threads())")
    assert threads_seen("all") == ["None", *torch_default]


def test_cases_can_be_narrowed_by_name_and_unknown_names_are_refused():
    assert training_steps.cases(False, ["LSTM", "small ResNet"]) == [("small ResNet", 32), ("small ResNet", 128),
                                                                       ("LSTM", 64)]
    assert [name for name, _ in training_steps.cases(True)] == list(training_steps.GOALS)
    with pytest.raises(ValueError, match=r"Unknown case\(s\) \['LTSM'\]; known: \['digits CNN'"):
        training_steps.cases(False, ["LTSM"])
