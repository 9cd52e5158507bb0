"""make_grid by torchvision's definition, and save_image's PNG decoded back to the pixels by a reader written here."""
from __future__ import annotations

import io
import math

import numpy as np
import pytest

import taugrad
from taugrad.vision.png import encode_png
from taugrad.vision.utils import make_grid, save_image

from .png_reader import read_png


def _batch(n, c=3, h=4, w=5, seed=0):
    return np.random.default_rng(seed).uniform(-1, 2, size=(n, c, h, w))


def _expected_grid(images, nrow, padding, pad_value):
    """The definition: R = ceil(B / nrow) rows of K = min(nrow, B) cells of (H + p) x (W + p), plus p at the end."""
    b, c, h, w = images.shape
    cols = min(nrow, b)
    rows = math.ceil(b / cols)
    grid = np.full((c, rows * (h + padding) + padding, cols * (w + padding) + padding), pad_value)
    for k in range(b):
        top = (k // cols) * (h + padding) + padding
        left = (k % cols) * (w + padding) + padding
        grid[:, top:top + h, left:left + w] = images[k]
    return grid


@pytest.mark.parametrize("n, nrow, padding, pad_value", [(5, 2, 2, 0.0), (8, 8, 0, 0.5), (3, 8, 1, 1.0),
                                                         (7, 3, 3, -1.0)])
def test_make_grid_places_each_image_in_its_cell(n, nrow, padding, pad_value):
    images = _batch(n)
    grid = make_grid(taugrad.from_numpy(images), nrow=nrow, padding=padding, pad_value=pad_value)
    np.testing.assert_array_equal(grid.numpy(), _expected_grid(images, nrow, padding, pad_value))


def test_make_grid_of_gray_images_repeats_the_channel_and_takes_a_list():
    images = _batch(3, c=1)
    grid = make_grid([taugrad.from_numpy(i) for i in images], nrow=2)
    assert tuple(grid.shape) == (3, 2 * 6 + 2, 2 * 7 + 2)
    np.testing.assert_array_equal(grid.numpy(), _expected_grid(np.repeat(images, 3, axis=1), 2, 2, 0.0))


def test_make_grid_of_one_image_has_no_frame():
    one = _batch(1, c=1)
    assert tuple(make_grid(taugrad.from_numpy(one)).shape) == (3, 4, 5)
    assert tuple(make_grid(taugrad.from_numpy(one[0, 0])).shape) == (3, 4, 5)


def test_make_grid_normalize_maps_the_range_onto_0_1():
    images = _batch(4)
    lo, hi = images.min(), images.max()
    grid = make_grid(taugrad.from_numpy(images), nrow=4, padding=0, normalize=True).numpy()
    np.testing.assert_allclose(grid, _expected_grid((images - lo) / (hi - lo), 4, 0, 0.0), rtol=1e-12)
    clamped = make_grid(taugrad.from_numpy(images), nrow=4, padding=0, normalize=True, value_range=(0.0, 1.0))
    np.testing.assert_allclose(clamped.numpy(), _expected_grid(np.clip(images, 0, 1), 4, 0, 0.0), rtol=1e-12)
    each = make_grid(taugrad.from_numpy(images), nrow=4, padding=0, normalize=True, scale_each=True).numpy()
    per = np.stack([(i - i.min()) / (i.max() - i.min()) for i in images])
    np.testing.assert_allclose(each, _expected_grid(per, 4, 0, 0.0), rtol=1e-12)
    flat = make_grid(taugrad.full((2, 3, 2, 2), 0.7, dtype=taugrad.float64), normalize=True, padding=0).numpy()
    assert np.all(flat == 0.0)  # a constant batch: (x - low) / 1e-5 with x == low
    with pytest.raises(TypeError, match="value_range has to be a tuple"):
        make_grid(taugrad.from_numpy(images), normalize=True, value_range=[0, 1])


def test_make_grid_leaves_its_input_alone():
    images = _batch(2)
    t = taugrad.from_numpy(images.copy())
    make_grid(t, normalize=True)
    np.testing.assert_array_equal(t.numpy(), images)


def test_save_image_writes_a_png_of_the_grid_bytes(tmp_path):
    images = _batch(5, seed=3) / 2
    path = tmp_path / "grid.png"
    save_image(taugrad.from_numpy(images), str(path), nrow=3, padding=1)
    pixels = read_png(path.read_bytes())
    grid = _expected_grid(images, 3, 1, 0.0)
    expected = np.clip(grid * 255 + 0.5, 0, 255).astype(np.uint8).transpose(1, 2, 0)
    np.testing.assert_array_equal(pixels, expected)


def test_save_image_to_an_open_file_and_normalize(tmp_path):
    images = _batch(2, c=1, seed=4)
    buffer = io.BytesIO()
    save_image(taugrad.from_numpy(images), buffer, format="png", normalize=True, padding=0)
    pixels = read_png(buffer.getvalue())
    scaled = (images - images.min()) / (images.max() - images.min())
    expected = np.clip(_expected_grid(np.repeat(scaled, 3, 1), 8, 0, 0.0) * 255 + 0.5, 0, 255).astype(np.uint8)
    np.testing.assert_array_equal(pixels, expected.transpose(1, 2, 0))
    with pytest.raises(ValueError, match="PNG files only"):
        save_image(taugrad.from_numpy(images), str(tmp_path / "x.jpg"))


@pytest.mark.parametrize("shape", [(3, 4), (3, 4, 1), (2, 5, 2), (1, 1, 3), (4, 2, 4)])
def test_encode_png_round_trips_every_channel_count(shape):
    pixels = np.random.default_rng(5).integers(0, 256, size=shape, dtype=np.uint8)
    back = read_png(encode_png(pixels))
    np.testing.assert_array_equal(back, pixels.reshape(shape[0], shape[1], -1))


def test_the_png_reader_can_fail():
    data = bytearray(encode_png(np.zeros((2, 2), np.uint8)))
    data[20] ^= 1  # a header byte: its CRC no longer matches
    with pytest.raises(AssertionError, match="bad CRC"):
        read_png(bytes(data))


def test_encode_png_refuses_what_it_cannot_write():
    with pytest.raises(TypeError, match="uint8"):
        encode_png(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="1..4 image"):
        encode_png(np.zeros((2, 2, 5), np.uint8))
