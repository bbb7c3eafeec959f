"""The ``nodeweave`` command: the demo, and a viewer for saved model files."""

import argparse
import sys


def _load(args):
    from engine import ModelFormatError, load_model

    custom_objects = {}
    for source in args.custom_objects or ():
        custom_objects.update(_objects_of(source))
    try:
        return load_model(args.file, custom_objects=custom_objects, compile=False)
    except ModelFormatError as error:
        sys.exit(f"nodeweave: {error}")


def _objects_of(source):
    """``{name: object}`` of the classes and functions that the module ``source``
    (a ``.py`` file or an importable module name) defines, for ``custom_objects``.
    The user names the module on the command line: the file being opened never
    chooses what is imported."""
    import importlib
    import importlib.util
    import inspect
    from pathlib import Path

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
    return {name: value for name, value in vars(module).items()
            if (inspect.isclass(value) or inspect.isfunction(value)) and value.__module__ == module.__name__}


def _summary(args):
    from graph import summary

    summary(_load(args), expand_nested=args.expand_nested, show_trainable=args.show_trainable)


def _plot(args):
    import warnings

    from graph import plot_model

    model = _load(args)
    with warnings.catch_warnings(record=True) as caught:  # a bitmap too large is written as SVG, with a warning
        warnings.simplefilter("always")
        try:
            plot_model(model, to_file=args.output, show_shapes=args.show_shapes, show_dtype=args.show_dtype,
                       expand_nested=args.expand_nested, show_layer_activations=args.show_activations,
                       show_trainable=args.show_trainable, show_params=args.show_params, per_call=args.per_call,
                       rankdir=args.rankdir, dpi=args.dpi, layer_range=args.layer_range, max_depth=args.max_depth,
                       collapse_repeats=args.collapse_repeats)
        except ValueError as error:
            sys.exit(f"nodeweave: {error}")
    for warning in caught:
        print(f"nodeweave: {warning.message}", file=sys.stderr)
    if not caught:
        print(f"wrote {args.output}")


def _inspect(args):
    model = _load(args)
    layers = model.layers
    if args.layer is not None:
        names = [layer.name for layer in layers]
        if args.layer not in names:
            sys.exit(f"nodeweave: model {model.name!r} has no layer {args.layer!r}; its layers are {names}.")
        layers = [model.get_layer(args.layer)]
    steps = model.plan.steps
    for layer in layers:
        print(f"{layer.name} ({type(layer).__name__})")
        for step in steps:
            if step.layer is layer:
                inbound = ", ".join(f"{t._keras_history.layer.name}[{t._keras_history.node_index}][{t._keras_history.tensor_index}]"
                                    for t in step.node.input_tensors) or "-"
                print(f"  call {step.node.output_tensors[0]._keras_history.node_index}: inbound {inbound}")
        outbound = sorted({s.layer.name for s in steps
                           if any(t._keras_history.layer is layer for t in s.node.input_tensors)})
        print(f"  outbound: {', '.join(outbound) or '-'}")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="nodeweave", description="nodeweave: layer graphs on NumPy.")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("demo", help="train the digits CNN and show its graph (the README's main job)")

    summary = commands.add_parser("summary", help="print the summary table of a saved model (.nw or Keras .keras)")
    summary.add_argument("file")
    summary.add_argument("--expand-nested", action="store_true", help="show the layers of nested models")
    summary.add_argument("--show-trainable", action="store_true", help="add a Trainable column")
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
    plot.add_argument("--layer-range", nargs=2, metavar=("FIRST", "LAST"), help="draw only the layers from FIRST "
                      "to LAST (names or regular expressions)")
    plot.add_argument("--max-depth", type=int, help="with --expand-nested, how many levels of nested models to expand")
    plot.set_defaults(run=_plot)

    inspect = commands.add_parser("inspect", help="show the inbound and outbound links of a saved model's layers")
    inspect.add_argument("file")
    inspect.add_argument("--layer", help="only this layer")
    inspect.set_defaults(run=_inspect)

    for command in (summary, plot, inspect):
        command.add_argument("--custom-objects", action="append", metavar="MODULE",
                             help="a .py file or module whose classes and functions the model file names (its own "
                                  "layers), as load_model(custom_objects=...); may be repeated")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from graph.demo import run_demo

        run_demo()
    else:
        args.run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
