"""print_tabular: one line per Node, inputs as layer[node_index][tensor_index]."""

from engine import Input, Layer, Model
from graph import print_tabular
from tests.graph.zoo import zoo


def test_one_row_per_node_in_execution_order():
    lines = []
    print_tabular(zoo(), print_fn=lines.append)
    assert lines == [
        "layer          class       inputs                      output shapes",
        "-------------  ----------  --------------------------  -------------",
        "a[0]           InputLayer  -                           (None, 16)",
        "b[0]           InputLayer  -                           (None, 8)",
        "proj[0]        Dense       a[0][0]                     (None, 8)",
        "shared[0]      Dense       proj[0][0]                  (None, 8)",
        "shared[1]      Dense       b[0][0]                     (None, 8)",
        "add[0]         BinaryOp    shared[0][0], shared[1][0]  (None, 8)",
        "level1[0]      Functional  add[0][0]                   (None, 8)",
        "score[0]       Dense       level1[0][0]                (None, 1)",
        "multiply_1[0]  BinaryOp    level1[0][0], shared[1][0]  (None, 8)",
        "get_item[0]    GetItem     multiply_1[0][0]            (None, 4)",
    ]


def test_multi_output_calls_list_every_shape(capsys):
    class Split(Layer):
        def compute_output_shape(self, input_shape):
            return [input_shape[:-1] + (1,), input_shape[:-1] + (2,)]

        def call(self, inputs):
            return [inputs[..., :1], inputs[..., 1:]]

    x = Input(shape=(3,), name="x")
    first, second = Split(name="split")(x)
    print_tabular(Model(x, second + first, name="m"))
    assert capsys.readouterr().out.splitlines()[3:] == [
        "split[0]  Split       x[0][0]                   [(None, 1), (None, 2)]",
        "add[0]    BinaryOp    split[0][1], split[0][0]  (None, 2)",
    ]
