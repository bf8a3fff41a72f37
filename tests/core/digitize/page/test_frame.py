"""The canonical frame's turn (core/digitize/page/frame.py) is NumPy's transpose, byte for byte, whichever library
makes it: grey and colour pictures, one channel kept, views, dtypes OpenCV lacks, empty pictures; and it is undone."""

import numpy as np

from core.digitize.page.frame import from_canonical, to_canonical


def test_the_turn_is_numpys_transpose():
    rng = np.random.default_rng(0)
    for dtype in (np.uint8, np.int8, np.uint16, np.int16, np.int32, np.float32, np.float64, bool, np.int64):
        for shape in ((5, 7), (1, 9), (9, 1), (6, 4, 1), (6, 4, 3), (6, 4, 4), (6, 4, 5), (0, 3), (301, 257, 3)):
            picture = (rng.random(shape) * 100).astype(dtype)
            for x in (picture, picture[:, ::2]):
                got = to_canonical(x, "y")
                want = np.ascontiguousarray(x.swapaxes(0, 1))
                assert got.dtype == want.dtype and got.shape == want.shape and got.flags.c_contiguous
                assert got.tobytes() == want.tobytes()
                assert np.array_equal(from_canonical(got, "y"), x)


def test_a_wide_picture_is_left_as_it_is():
    x = np.arange(12, dtype=np.uint8).reshape(3, 4)
    assert to_canonical(x, "x") is x and from_canonical(x, "x") is x
