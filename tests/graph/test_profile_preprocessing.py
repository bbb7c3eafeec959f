"""profile counts the preprocessing layers by hand: scales and shifts, resizing's kernel taps
pass by pass, crops for nothing."""

from engine import Input, Model
from graph import profile
from layers import CenterCrop, Normalization, Rescaling, Resizing


def test_preprocessing_pipeline_by_hand():
    x = Input(shape=(7, 9, 3), name="x")
    y = Rescaling(1 / 255.0, name="scale")(x)
    y = Normalization(mean=0.5, variance=0.25, name="norm")(y)
    y = Resizing(14, 18, name="up")(y)                          # bilinear, doubling: 2 taps per output
    y = CenterCrop(10, 10, name="crop")(y)                      # fits: a crop
    y = CenterCrop(16, 20, name="crop_up")(y)                   # too small: a 10x9 box resized to 16x20
    y = Resizing(5, 5, antialias=True, name="down")(y)          # antialiased 16->5 and 20->5
    y = Resizing(10, 3, interpolation="nearest", name="near")(y)
    flops = {row["node"]: row["flops"] for row in profile(Model(x, y), batch_size=2).rows}
    pixels = 2 * 7 * 9 * 3
    assert flops["scale[0]"] == 2 * pixels and flops["norm[0]"] == 2 * pixels
    # Rows 7 -> 14 (outputs 2*14*9*3), then columns 9 -> 18 (outputs 2*14*18*3), 2 taps of 2 FLOPs each.
    assert flops["up[0]"] == 4 * (2 * 14 * 9 * 3) + 4 * (2 * 14 * 18 * 3)
    assert flops["crop[0]"] == 0
    # Keras' box of the 16:20 ratio in a 10x10 image: int(10 * 16 / 20) = 8 rows, all 10 columns, from
    # row 1; rows 8 -> 16 then columns 10 -> 20, 2 taps each.
    assert flops["crop_up[0]"] == 4 * (2 * 16 * 10 * 3) + 4 * (2 * 16 * 20 * 3)
    # Antialiased downscaling widens the triangle by the factor. Rows 16 -> 5: radius 3.2 around the
    # centers 1.1, 4.3, 7.5, 10.7, 13.9 reaches 5, 6, 6, 6, 5 pixels; columns 20 -> 5: radius 4 around
    # 1.5, 5.5, ... reaches 8 pixels (those at distance 4.5 do not count).
    assert flops["down[0]"] == 2 * 6 * (2 * 5 * 20 * 3) + 2 * 8 * (2 * 5 * 5 * 3)
    assert flops["near[0]"] == 0
