"""predict and evaluate on Dask arrays, block by block, on whatever Dask
scheduler is active (threads by default, ``scheduler="processes"``, or a
``dask.distributed.Client``).

The arrays are cut into blocks along axis 0 (the first Dask array's chunks;
every other array follows them, with one chunk along its other axes). A block
task runs the in-memory ``predict`` or ``evaluate`` on its block's NumPy
arrays, in ``batch_size`` batches. The graph holds the model as ONE key that
every block task depends on (see ``_ShippedModel``), so each worker process
rebuilds it once, however many blocks it runs.

Dask is imported here only, and only once a Dask array is passed: the core
install needs NumPy alone.
"""

import contextlib
import copy
import itertools
import math
import threading
import uuid

import numpy as np

from engine import tree
from engine.training.callbacks import CallbackList
from engine.data.data_adapter import check_batch_size
from engine.training.metrics import Metric
from engine.pickling import rebuild, reduce_layer
from engine.training.progress import format_logs, verbosity

# Held by evaluate() blocks whose model may store losses on its layers (see _may_add_losses).
_ADDED_LOSSES_LOCK = threading.Lock()
# The model this process last rebuilt from a _ShippedModel: {token: model}, one entry at most.
_REBUILT = {}
_REBUILD_LOCK = threading.Lock()


def holds_dask_array(*values) -> bool:
    """Whether any leaf of ``values`` (arrays, or lists, tuples and dicts of
    them) is a Dask array; tells by the leaf's type, without importing Dask.

    Example:
        >>> import numpy as np
        >>> holds_dask_array({"a": np.ones(3)}, None)
        False
    """
    return any(type(leaf).__module__.startswith("dask.array") for value in values for leaf in tree.flatten(value))


def predict(model, x, batch_size: int | None = 32, callbacks: list | None = None):
    """``model.predict(x)`` for Dask arrays: lazy Dask arrays, in the model's
    output structure, with ``x``'s blocks along axis 0. A block's outputs are
    computed once, by the in-memory ``predict``, whichever outputs are read.

    Example:
        >>> import dask.array as da
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> inputs = Input(shape=(4,))
        >>> model = Model(inputs, Dense(2)(inputs))
        >>> model.predict(da.ones((100, 4), chunks=25)).compute().shape
        (100, 2)
    """
    import dask
    import dask.array as da

    batch_size = check_batch_size(batch_size)
    if callbacks:
        raise ValueError(
            f"predict() of model {model.name!r} on Dask arrays returns lazy arrays whose blocks run on the "
            f"scheduler's workers, so it calls no callbacks; received callbacks={callbacks!r}. Pass no callbacks, "
            "or predict on NumPy arrays (x.compute()) to have them called."
        )
    sizes, blocks = _blocks(model, "predict()", x=x)
    specs = _output_specs(model, x)
    shipped = _model_key(model)
    block_outputs = [dask.delayed(_predict_block, nout=len(specs), pure=False)(shipped, batch_size, block["x"])
                     for block in blocks]
    flat = [da.concatenate([da.from_delayed(outputs[index], (size, *_known(spec.shape[1:])), spec.dtype)
                            for outputs, size in zip(block_outputs, sizes)], allow_unknown_chunksizes=True)
            for index, spec in enumerate(specs)]
    return model._pack_outputs(flat)


def evaluate(model, x, y=None, batch_size: int | None = 32, verbose: str | int = "auto", sample_weight=None,
             callbacks: list | None = None, return_dict: bool = False) -> float | list | dict:
    """``model.evaluate`` for Dask arrays (``y`` and ``sample_weight`` may be
    Dask or NumPy arrays): the same numbers as in-memory ``evaluate``, up to
    float32 rounding, with the forward passes running on the workers.

    Each block is evaluated with metrics of its own and returns their state;
    the states are summed here, which is exact for the built-in metrics
    (totals and counts). A metric given to ``compile`` whose state may not add
    up (a custom Metric that updates or resets its own state) is refused
    before any block runs. Callbacks get ``on_test_begin`` and
    ``on_test_end``; the batches run on the workers, which call no callbacks.

    Example:
        >>> import dask.array as da
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> inputs = Input(shape=(4,))
        >>> model = Model(inputs, Dense(1)(inputs))
        >>> model.compile(loss="mse", metrics=["mae"])
        >>> sorted(model.evaluate(da.ones((100, 4), chunks=25), da.ones((100, 1), chunks=25), verbose=0,
        ...                       return_dict=True))
        ['loss', 'mae']
    """
    import dask

    batch_size = check_batch_size(batch_size)
    shown = verbosity(verbose)
    sizes, blocks = _blocks(model, "evaluate()", batch_size, x=x, y=y, sample_weight=sample_weight)
    _output_specs(model, x)  # first, so that resolving the compiled losses never reads x
    model._require_compiled("evaluate", x)
    _check_summable(model)
    shipped = _model_key(model)
    tasks = [dask.delayed(_evaluate_block, pure=False)(shipped, batch_size, block["x"], block["y"],
                                                       block["sample_weight"])
             for block in blocks]
    callback_list = CallbackList(callbacks or [], model, {"steps": max(math.ceil(sum(sizes) / batch_size), 1)})
    callback_list.on_test_begin({})
    summed = _shallow_copy(model)  # reads the summed metrics; the model's own stay as they are
    summed._loss_tracker, summed.compiled_loss, summed.compiled_metrics = _summed(dask.compute(*tasks))
    logs = summed.get_metrics_result()
    callback_list.on_test_end(logs)
    if shown:
        print(format_logs(logs))
    return logs if return_dict else summed._ordered_results(logs)


# ------------------------------------------------------------------ blocks
def _blocks(model, what, batch_size=None, **named):
    """(samples per block, one dict per block of the ``named`` values in
    their structures, each array replaced by its block as a Delayed).

    Blocks follow the axis-0 chunks of the first Dask array; with
    ``batch_size``, their inner edges move down to multiples of it (see
    ``_batch_aligned``)."""
    flat = {name: tree.flatten(value) for name, value in named.items()}
    for name, leaves in flat.items():
        for index, leaf in enumerate(leaves):
            if holds_dask_array(leaf) and any(math.isnan(n) for n in leaf.shape):
                where = name if len(leaves) == 1 else f"{name} (array {index} of {len(leaves)})"
                raise ValueError(
                    f"{what} of model {model.name!r} received a Dask array with unknown chunk sizes for {where}, "
                    f"of shape {leaf.shape}: the blocks' sample counts must be known to split the work and "
                    f"size the results. Call compute_chunk_sizes() on that array first (e.g. {name} = "
                    f"{name}.compute_chunk_sizes()), which computes them."
                )
    sizes = {name: [len(leaf) for leaf in leaves if leaf is not None]
             for name, leaves in flat.items() if named[name] is not None}
    if len({n for counts in sizes.values() for n in counts}) != 1:  # the in-memory path's message
        detail = "; ".join(f"'{k}' sizes: {v}" for k, v in sizes.items())
        raise ValueError(
            f"Data cardinality is ambiguous: {detail}. Make sure all arrays contain the same number of samples."
        )
    chunks = next(leaf.chunks[0] for leaves in flat.values() for leaf in leaves if holds_dask_array(leaf))
    if batch_size is not None:
        chunks = _batch_aligned(chunks, batch_size)
    delayed = {name: [_split(leaf, chunks) for leaf in leaves] for name, leaves in flat.items()}
    blocks = [{name: tree.pack_as(named[name], [None if d is None else d[block] for d in delayed[name]])
               for name in named}
              for block in range(len(chunks))]
    return chunks, blocks


def _split(leaf, chunks):
    """``leaf`` (a Dask or NumPy array, or None) as one Delayed per block of
    ``chunks`` samples, each block one chunk along the other axes."""
    import dask.array as da

    if leaf is None:
        return None
    array = da.asarray(leaf)
    return array.rechunk((chunks, *array.shape[1:])).to_delayed().ravel()


def _batch_aligned(chunks, batch_size):
    """``chunks`` (axis-0 block sizes) with each inner edge moved down to a
    multiple of ``batch_size`` (blocks left empty are dropped).

    Why the blocks' sums are exactly in-memory evaluate's: every state is a
    sum over batches (the loss tracker adds ``loss * batch size`` and the
    batch size, the metrics add weighted totals and counts), and aligned
    blocks run exactly the in-memory batches (batch k holds samples
    ``k * batch_size`` onwards), so summing the blocks' states sums the same
    per-batch numbers; only the order of the float32 additions differs. With
    the default reduction a batch's ``loss * batch size`` is the sum of its
    samples' weighted losses, so even unaligned edges would do; aligning also
    covers the losses whose value depends on which samples share a batch:
    ``reduction="sum"`` or ``"mean_with_sample_weight"``, masked losses
    (``ignore_class``), ``add_loss`` terms.

    Example:
        >>> _batch_aligned((100, 100, 50), 32)
        (96, 96, 58)
    """
    ends = {end - end % batch_size for end in itertools.accumulate(chunks[:-1])} - {0}
    ends = sorted(ends | {sum(chunks)})
    return tuple(end - start for start, end in zip([0, *ends], ends))


def _output_specs(model, x):
    """The model's flat output specs (shape, dtype); a subclassed model that
    has not run yet first runs on ``x``'s first sample, as in memory."""
    if not model._outputs_known():
        model._build_on(tree.map_structure(lambda leaf: None if leaf is None else np.asarray(leaf[:1]), x))
    return model.outputs


def _known(shape):
    """``shape`` with NaN, Dask's unknown size, for None (a size the model
    learns from its inputs only when it runs, such as a sequence length)."""
    return tuple(math.nan if n is None else n for n in shape)


def _model_key(model):
    """``model`` as one key of the graph, under a unique name (never merged
    with another graph's model); every block task depends on it."""
    import dask

    return dask.delayed(_ShippedModel(model), name=f"nodeweave-model-{model.name}-{uuid.uuid4().hex}")


class _ShippedModel:
    """A model as a Dask graph holds it: the model itself in the process that
    made the graph; elsewhere a token and the model's ``.nw`` archive bytes,
    which each process rebuilds once.

    Pickled (to the scheduler and the workers of ``dask.distributed``, or with
    every task by dask's multiprocessing scheduler, which sends each task its
    dependencies), it carries the bytes only, written once; the scheduler
    forwards them without rebuilding. ``model()`` rebuilds on first use, and a
    process keeps the model it last rebuilt, so blocks arriving one by one with
    their own copy of the bytes reuse it. Threads share it: inference stores
    nothing on the layers (but the losses they add: see ``_may_add_losses``).

    Example:
        >>> import pickle
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> inputs = Input(shape=(2,))
        >>> shipped = _ShippedModel(Model(inputs, Dense(1)(inputs), name="m"))
        >>> pickle.loads(pickle.dumps(shipped)).model().name
        'm'
    """

    def __init__(self, model=None, token=None, archive=None):
        self.token = token or uuid.uuid4().hex
        self._model, self._archive = model, archive

    def __reduce__(self):
        if self._archive is None:
            self._archive = reduce_layer(self._model)[1]  # rebuild()'s arguments: the .nw bytes (+ custom objects)
        return _ShippedModel, (None, self.token, self._archive)

    def model(self):
        """The model, rebuilt in this process on first use."""
        with _REBUILD_LOCK:
            if self._model is None:
                if self.token not in _REBUILT:
                    _REBUILT.clear()
                    _REBUILT[self.token] = rebuild(*self._archive)
                self._model = _REBUILT[self.token]
        return self._model


# ------------------------------------------------------------ on the workers
def _predict_block(shipped, batch_size, x):
    """A block's flat outputs, by in-memory predict (inference stores nothing
    on the layers, so threads may share the model)."""
    return tuple(tree.flatten(shipped.model().predict(x, batch_size=batch_size, verbose=0)))


def _evaluate_block(shipped, batch_size, x, y, sample_weight):
    """A block's ``(loss tracker, compiled loss, compiled metrics)``, by
    in-memory evaluate on a shallow copy of the model compiled afresh: it
    shares the layers and weights but owns its metrics (the metric objects
    given to compile copied), so the model, which other threads of this
    process may be using, is left untouched."""
    model = shipped.model()
    evaluator = _shallow_copy(model)
    loss, loss_weights, metrics, weighted_metrics = copy.deepcopy(model._compile_args)
    evaluator.compile(model.optimizer, loss=loss, loss_weights=loss_weights, metrics=metrics,
                      weighted_metrics=weighted_metrics)
    with _ADDED_LOSSES_LOCK if _may_add_losses(model) else contextlib.nullcontext():
        evaluator.evaluate(x, y, batch_size=batch_size, verbose=0, sample_weight=sample_weight)
    return evaluator._loss_tracker, evaluator.compiled_loss, evaluator.compiled_metrics


def _shallow_copy(model):
    """A second object of ``model``'s class sharing its attributes (layers,
    weights, compile state); ``copy.copy`` would rebuild from ``.nw`` bytes."""
    view = object.__new__(type(model))
    view.__dict__.update(model.__dict__)
    return view


def _may_add_losses(model):
    """Whether calling ``model`` may store losses on its layers (``add_loss``):
    with code of the user's (a subclassed model, a custom layer) or an activity
    regularizer; nodeweave's own layers add none otherwise. Each call replaces
    the losses the layers hold and evaluate reads them after the call, so
    threads evaluating such a model must take turns."""
    return any(type(module).__module__.split(".")[0] not in ("engine", "layers")
               or getattr(module, "activity_regularizer", None) is not None
               for module in [model, *model._submodules()])


# ------------------------------------------------------- summing the blocks
def _summed(parts):
    """The first block's ``(loss tracker, compiled loss, compiled metrics)``,
    holding the sum of every block's metric state."""
    first = parts[0]
    for part in parts[1:]:
        for metric, other in zip(_stateful(*first), _stateful(*part)):
            for name in _summed_state(metric):
                setattr(metric, name, getattr(metric, name) + getattr(other, name))
    return first


def _stateful(loss_tracker, compiled_loss, compiled_metrics):
    """The metrics holding state, in an order every block shares: the loss
    tracker, the per-output loss means, the compiled metrics."""
    return [loss_tracker, *compiled_loss.metrics, *([] if compiled_metrics is None else compiled_metrics.metrics)]


def _check_summable(model):
    """Raises, before any block runs, for a metric given to ``compile`` whose
    state may not add up over blocks (names, functions and configs give
    built-in metrics, whose state does)."""
    for spec in tree.flatten(list(model._compile_args[2:])):  # metrics, weighted_metrics
        if isinstance(spec, Metric) or isinstance(spec, type) and issubclass(spec, Metric):
            _summed_state(spec)


def _summed_state(metric):
    """The names of the state attributes of ``metric`` (a Metric or a Metric
    class) that add up over blocks; a ValueError when its state may not."""
    cls = metric if isinstance(metric, type) else type(metric)
    if cls.additive_state and all(getattr(cls, method).__module__.startswith("engine.training.metrics.")
                                  for method in ("update_state", "reset_state")):
        return cls.additive_state
    name = getattr(metric, "name", cls.__name__)
    raise ValueError(
        f"evaluate() on Dask arrays cannot compute metric {name!r} ({cls.__name__}): it sums the metric states "
        "of the blocks, which is exact only for states made of totals and counts: those of nodeweave's own "
        "metrics that declare them (Metric.additive_state: Mean and the metrics built on it, Sum, AUC, "
        "Precision, Recall, the confusion counts, the metrics at an operating point, the IoU metrics), with "
        f"their own update_state and reset_state. {cls.__name__} keeps a state of its own. Evaluate on NumPy "
        "arrays (x.compute()), or compute the metric from model.predict(x)."
    )
