"""The ``nodeweave`` command: the demo, and viewers for saved model files.

Errors speak the command line's language: a flag is named as it is typed
(``--expand-nested``), never as the Python argument behind it.
"""

import argparse
import re
import sys
from pathlib import Path

from engine.network.qualified_names import closest_paths, layer_paths
from graph._format import tensor_ref
from graph._node_data import NAMED as _NODE_DATA

_CLOSE_NAMES = 5  # the layer names a mistyped --layer or --layer-range suggests


def _load(args):
    from engine import ModelFormatError, load_model

    custom_objects = {}
    for source in args.custom_objects or ():
        custom_objects.update(_objects_of(source))
    try:
        return load_model(args.file, custom_objects=custom_objects, compile=False)
    except ModelFormatError as error:
        sys.exit(f"nodeweave: {_in_cli_terms(str(error))}")


def _in_cli_terms(message):
    """A loader's message with its advice for Python callers put as the command's flags."""
    message = re.sub(r"custom_objects=\{'(?:[^']*[>:.])?([^'>:.]*)': [^}]*\}",
                     r"--custom-objects MODULE (a .py file or module that defines \1)", message)
    message = message.replace("in custom_objects", "with --custom-objects")
    return message.replace("load it with safe_mode=False", "load it in Python with load_model(path, safe_mode=False)")


def _objects_of(source):
    """``{name: object}`` of the classes and functions that the module ``source``
    (a ``.py`` file or an importable module name) defines, for ``custom_objects``;
    functions also under ``module:name``, as a model file names them (``__main__:name``
    too for a ``.py`` file, which a script run directly saves under that name).
    The user names the module on the command line: the file being opened never
    chooses what is imported."""
    import importlib
    import importlib.util
    import inspect

    path = Path(source)
    try:
        if path.suffix == ".py":
            if not path.is_file():
                sys.exit(f"nodeweave: --custom-objects {source}: no such file.")
            spec = importlib.util.spec_from_file_location(path.stem, path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module(source)
    except ImportError as error:
        sys.exit(f"nodeweave: --custom-objects {source}: {error}. Give a .py file or a module on the Python path.")
    # A file names a function by module and name: a .py file's own when it was saved by a script run directly.
    prefixes = [module.__name__] + (["__main__"] if path.suffix == ".py" else [])
    objects = {}
    for name, value in vars(module).items():
        if (inspect.isclass(value) or inspect.isfunction(value)) and value.__module__ == module.__name__:
            objects[name] = value
            if inspect.isfunction(value):
                objects.update({f"{prefix}:{name}": value for prefix in prefixes})
    return objects


def _summary(args):
    from graph import summary

    summary(_load(args), expand_nested=args.expand_nested, show_trainable=args.show_trainable,
            collapse_repeats=args.collapse_repeats)


def _plot(args):
    import warnings

    from graph import plot_model

    model = _load(args)
    if args.layer_range:
        _check_layer_range(model, args.layer_range, args.file)
    with warnings.catch_warnings(record=True) as caught:  # a bitmap too large is written as SVG, with a warning
        warnings.simplefilter("always")
        try:
            plot_model(model, to_file=args.output, show_shapes=args.show_shapes, show_dtype=args.show_dtype,
                       expand_nested=args.expand_nested, show_layer_activations=args.show_activations,
                       show_trainable=args.show_trainable, show_params=args.show_params, per_call=args.per_call,
                       rankdir=args.rankdir, dpi=args.dpi, layer_range=args.layer_range, max_depth=args.max_depth,
                       collapse_repeats=args.collapse_repeats, node_data=args.node_data)
        except ValueError as error:
            sys.exit(f"nodeweave: {error}")
    for warning in caught:
        print(f"nodeweave: {warning.message}", file=sys.stderr)
    if not caught:
        print(f"wrote {args.output}")


def _check_layer_range(model, layer_range, file):
    """Exits naming ``--layer-range`` when one of its patterns matches no
    top-level layer name (``re.match``, as ``plot_model`` matches them)."""
    names = [layer.name for layer in model.layers]
    for pattern in layer_range:
        if not any(re.match(pattern, name) for name in names):
            sys.exit(f"nodeweave: --layer-range {' '.join(layer_range)}: no layer name of model {model.name!r} "
                     f"starts with a match of {pattern!r}.{_closest(pattern, names, file)}")


def _view(args):
    from graph.html_view import save_html

    model = _load(args)
    output = args.output or f"{Path(args.file).stem}.html"
    try:
        save_html(model, output, node_data=args.node_data)
    except ValueError as error:
        sys.exit(f"nodeweave: {error}")
    except OSError as error:
        sys.exit(f"nodeweave: cannot write -o {output}: {error.strerror or error}.")
    print(f"wrote {output}")


def _export(args):
    from graph.onnx_export import save_onnx

    model = _load(args)
    output = args.output or f"{Path(args.file).stem}.onnx"
    try:
        save_onnx(model, output, opset=args.opset)
    except ModuleNotFoundError as error:
        sys.exit(f"nodeweave: {error}")
    except ValueError as error:  # OnnxExportError (a layer without a converter) and an --opset out of range
        sys.exit(f"nodeweave: {str(error).replace('opset=', '--opset ')}")
    except OSError as error:
        sys.exit(f"nodeweave: cannot write -o {output}: {error.strerror or error}.")
    print(f"wrote {output}")


def _python(args):
    from graph.to_python import to_python

    source = to_python(_load(args))
    if args.output is None:
        print(source, end="")
        return
    try:
        Path(args.output).write_text(source, encoding="utf-8")
    except OSError as error:
        sys.exit(f"nodeweave: cannot write -o {args.output}: {error.strerror or error}.")
    print(f"wrote {args.output}")


def _inspect(args):
    from graph._walk import plan_of

    model = _load(args)
    every = layer_paths(model)
    paths = every
    if args.layer is not None:
        if args.layer not in every:
            sys.exit(f"nodeweave: model {model.name!r} has no layer {args.layer!r}."
                     f"{_closest(args.layer, list(every), args.file)}")
        paths = {args.layer: every[args.layer]}
    for path, layer in paths.items():
        container, _, _ = path.rpartition("/")
        prefix = container + "/" if container else ""
        steps = plan_of(every[container] if container else model).steps
        print(f"{path} ({type(layer).__name__})")
        for step in steps:
            if step.layer is layer:
                inbound = ", ".join(prefix + tensor_ref(t) for t in step.node.input_tensors) or "-"
                print(f"  call {step.node.output_tensors[0]._keras_history.node_index}: inbound {inbound}")
        outbound = sorted({prefix + s.layer.name for s in steps
                           if any(t._keras_history.layer is layer for t in s.node.input_tensors)})
        print(f"  outbound: {', '.join(outbound) or '-'}")


def _diff(args):
    from graph.diff import diff

    first, second = (_load(argparse.Namespace(file=file, custom_objects=args.custom_objects))
                     for file in (args.file, args.other))
    found = diff(first, second)
    print(found)
    if args.plot:
        try:
            found.plot(args.plot)
        except ValueError as error:
            sys.exit(f"nodeweave: --plot {args.plot}: {error}")
        except OSError as error:
            sys.exit(f"nodeweave: cannot write --plot {args.plot}: {error.strerror or error}.")
        print(f"wrote {args.plot}")


def _closest(name, names, file):
    """The sentence that follows an unknown layer name: the closest few names and how to list them all."""
    close = [repr(match) for match in closest_paths(name, names, n=_CLOSE_NAMES)]
    if len(close) > 1:
        close[-2:] = [f"{close[-2]} or {close[-1]}"]
    guess = f" Did you mean {', '.join(close)}?" if close else " No layer name is close to it."
    return f"{guess} It has {len(names)} layers; `nodeweave inspect {file}` lists them."


def _positive_int(text):
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer (how many levels of nested models to "
                                         f"expand), received {text!r}")
    return int(text)


def _pattern(text):
    try:
        re.compile(text)
    except re.error as error:
        raise argparse.ArgumentTypeError(f"{text!r} is not a valid regular expression ({error}); put a "
                                         "backslash before a character that should match itself") from None
    return text


def main(argv: list[str] | None = None) -> int:
    """Runs the ``nodeweave`` command with ``argv`` (default: the command line).

    Args:
        argv: the arguments after the program name.

    Returns:
        0 on success; errors exit with a message naming the command's flags.

    Example:
        >>> import os, tempfile
        >>> from engine import Input, Model
        >>> from layers import Dense
        >>> x = Input(shape=(3,), name="x")
        >>> path = os.path.join(tempfile.mkdtemp(), "m.nw")
        >>> Model(x, Dense(2, name="d")(x)).save(path)
        >>> main(["inspect", path, "--layer", "d"])
        d (Dense)
          call 0: inbound x[0][0]
          outbound: -
        0
    """
    parser = argparse.ArgumentParser(prog="nodeweave", description="nodeweave: layer graphs on NumPy.")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("demo", help="train the digits CNN and show its graph (the README's main job)")

    summary = commands.add_parser("summary", help="print the summary table of a saved model (.nw or Keras .keras)")
    summary.add_argument("file")
    summary.add_argument("--expand-nested", action="store_true", help="show the layers of nested models")
    summary.add_argument("--show-trainable", action="store_true", help="add a Trainable column")
    summary.add_argument("--collapse-repeats", action="store_true",
                         help="list each run of identical blocks by its first block and one row for the others")
    summary.set_defaults(run=_summary)

    plot = commands.add_parser("plot", help="draw a saved model (.nw or Keras .keras) with graphviz")
    plot.add_argument("file")
    plot.add_argument("-o", "--output", default="model.svg", help="output file; its extension picks the format "
                      "(.svg, .png, .pdf, .dot)")
    for flag, text in (("--show-shapes", "show each box's output shape"), ("--show-dtype", "show dtypes"),
                       ("--expand-nested", "draw nested models as clusters"),
                       ("--show-activations", "show activations"), ("--show-trainable", "show trainability"),
                       ("--show-params", "show parameter counts"), ("--per-call", "one box per layer call"),
                       ("--collapse-repeats", "draw each run of identical blocks once, with its count")):
        plot.add_argument(flag, action="store_true", help=text)
    plot.add_argument("--rankdir", default="TB", choices=["TB", "LR", "BT", "RL"], help="layout direction")
    plot.add_argument("--dpi", type=int, default=96, help="resolution of bitmap outputs (PNG, JPEG...); SVG and PDF "
                      "are drawn at 72")
    plot.add_argument("--layer-range", nargs=2, type=_pattern, metavar=("FIRST", "LAST"),
                      help="draw only the layers from FIRST to LAST (names or regular expressions)")
    plot.add_argument("--max-depth", type=_positive_int, help="with --expand-nested, how many levels of nested "
                      "models to expand")
    plot.add_argument("--node-data", choices=_NODE_DATA, help="colour the boxes by this number per layer")
    plot.set_defaults(run=_plot)

    view = commands.add_parser("view", help="write the interactive HTML view of a saved model (.nw or Keras "
                               ".keras): one self-contained file, opened in any browser")
    view.add_argument("file")
    view.add_argument("-o", "--output", help="output file (default: FILE's name with .html, here)")
    view.add_argument("--node-data", choices=_NODE_DATA, help="colour the boxes by this number per layer")
    view.set_defaults(run=_view)

    inspect = commands.add_parser("inspect", help="show the inbound and outbound links of a saved model's layers, "
                                                  "nested models' layers included, by their qualified names")
    inspect.add_argument("file")
    inspect.add_argument("--layer", metavar="PATH", help="only this layer: its name, or its path through nested "
                                                         "models (block/inner/conv)")
    inspect.set_defaults(run=_inspect)

    export = commands.add_parser("export", help="write a saved model (.nw or Keras .keras) as ONNX, for ONNX Runtime "
                                 "and other tools (needs: pip install \"nodeweave[onnx]\")")
    export.add_argument("file")
    export.add_argument("-o", "--output", help="output file (default: FILE's name with .onnx, here)")
    export.add_argument("--opset", type=int, help="the ONNX opset (default 18)")
    export.set_defaults(run=_export)

    compare = commands.add_parser("diff", help="compare two saved models (.nw or Keras .keras): the layers the "
                                  "second adds, removes and changes, matched by their place in the graph")
    compare.add_argument("file")
    compare.add_argument("other")
    compare.add_argument("--plot", metavar="FILE", help="also draw both models side by side with the differences "
                         "coloured (.svg, .png, .pdf or .dot)")
    compare.set_defaults(run=_diff)

    python = commands.add_parser("python", help="print the Python source (a build_model() function) that rebuilds a "
                                 "saved model's architecture (.nw or Keras .keras)")
    python.add_argument("file")
    python.add_argument("-o", "--output", help="write the source to this .py file instead of printing it")
    python.set_defaults(run=_python)

    for command in (summary, plot, view, export, inspect, compare, python):
        command.add_argument("--custom-objects", action="append", metavar="MODULE",
                             help="a .py file or module whose classes and functions the model file names (its own "
                                  "layers), as load_model(custom_objects=...); may be repeated")
    args = parser.parse_args(argv)
    if args.command == "plot" and args.max_depth is not None and not args.expand_nested:
        plot.error(f"--max-depth {args.max_depth} says how many levels of nested models --expand-nested expands, "
                   "but --expand-nested is not given: add --expand-nested, or leave --max-depth out")
    if args.command == "demo":
        from graph.demo import run_demo

        run_demo()
    else:
        args.run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
