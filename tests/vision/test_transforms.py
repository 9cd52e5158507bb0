"""Transforms against their definitions and, where torch has the function, against torch in float64."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import taugrad
from taugrad.vision import transforms as T
from taugrad.vision.transforms import functional as TF


def _t(a):
    return taugrad.from_numpy(np.ascontiguousarray(a))


@pytest.fixture
def rgb():
    return np.random.default_rng(0).integers(0, 256, size=(6, 5, 3), dtype=np.uint8)


def test_to_tensor_bytes_are_chw_in_0_1(rgb):
    x = T.ToTensor()(rgb)
    assert tuple(x.shape) == (3, 6, 5) and x.dtype == taugrad.float32
    np.testing.assert_array_equal(x.numpy(), (rgb.transpose(2, 0, 1).astype(np.float32) / np.float32(255)))
    gray = rgb[:, :, 0]
    assert tuple(T.ToTensor()(gray).shape) == (1, 6, 5)


def test_to_tensor_keeps_other_dtypes_unscaled_and_follows_the_default_dtype(rgb):
    floats = rgb.astype(np.float64) / 7
    out = T.ToTensor()(floats)
    assert out.dtype == taugrad.float64 and np.array_equal(out.numpy(), floats.transpose(2, 0, 1))
    taugrad.set_default_dtype(taugrad.float64)
    try:
        assert T.ToTensor()(rgb).dtype == taugrad.float64
    finally:
        taugrad.set_default_dtype(taugrad.float32)
    with pytest.raises(TypeError, match="to_tensor: pic should be"):
        T.ToTensor()(_t(floats))
    with pytest.raises(TypeError, match="got list"):
        T.ToTensor()([[1, 2]])


def test_to_tensor_reads_pil_images_as_torchvision(rgb):
    Image = pytest.importorskip("PIL.Image")
    np.testing.assert_array_equal(T.ToTensor()(Image.fromarray(rgb)).numpy(), T.ToTensor()(rgb).numpy())
    binary = Image.fromarray(rgb[:, :, 0] > 128)  # mode "1": 0 or 1 after ToTensor
    np.testing.assert_array_equal(T.ToTensor()(binary).numpy()[0], (rgb[:, :, 0] > 128).astype(np.float32))


def test_normalize_matches_torch_in_float64(rgb):
    x = rgb.transpose(2, 0, 1) / 255.0
    mean, std = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)
    ours = T.Normalize(mean, std)(_t(x))
    theirs = (torch.from_numpy(x) - torch.tensor(mean, dtype=torch.float64)[:, None, None]) / \
        torch.tensor(std, dtype=torch.float64)[:, None, None]
    assert ours.dtype == taugrad.float64
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-15, atol=0)
    batch = np.stack([x, x[::-1]])  # (..., C, H, W): any leading dims
    np.testing.assert_allclose(T.Normalize(mean, std)(_t(batch)).numpy()[1], (x[::-1] - np.array(mean)[:, None, None])
                               / np.array(std)[:, None, None], rtol=1e-15)


def test_normalize_inplace_and_its_refusals():
    x = _t(np.ones((1, 2, 2)))
    same = TF.normalize(x, (0.5,), (0.25,), inplace=True)
    assert same is x and np.all(x.numpy() == 2.0)
    assert np.all(TF.normalize(_t(np.ones((1, 2, 2))), (0.5,), (0.25,)).numpy() == 2.0)
    with pytest.raises(ValueError, match="std evaluated to zero"):
        TF.normalize(_t(np.ones((2, 2, 2))), (0, 0), (1, 0))
    with pytest.raises(TypeError, match="float tensor"):
        TF.normalize(_t(np.ones((1, 2, 2), np.int64)), (0,), (1,))
    with pytest.raises(ValueError, match=r"\(\.\.\., C, H, W\)"):
        TF.normalize(_t(np.ones((2, 2))), (0,), (1,))


@pytest.mark.parametrize("size_in, size_out", [((12, 9), (5, 4)), ((5, 7), (11, 16)), ((8, 8), (3, 8)),
                                               ((30, 30), (7, 13))])
@pytest.mark.parametrize("antialias", [True, False])
def test_bilinear_resize_of_a_tensor_matches_torch_interpolate(size_in, size_out, antialias):
    x = np.random.default_rng(1).standard_normal((2, 3) + size_in)
    ours = TF.resize(_t(x), list(size_out), antialias=antialias)
    theirs = torch.nn.functional.interpolate(torch.from_numpy(x), size=size_out, mode="bilinear",
                                             align_corners=False, antialias=antialias)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)


def test_nearest_resize_matches_torch_interpolate():
    x = np.random.default_rng(2).standard_normal((1, 2, 7, 5))
    ours = TF.resize(_t(x), [10, 3], interpolation=T.InterpolationMode.NEAREST)
    theirs = torch.nn.functional.interpolate(torch.from_numpy(x), size=(10, 3), mode="nearest")
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_resize_int_matches_the_smaller_edge_and_byte_images_round(rgb):
    out = T.Resize(3)(rgb)  # 6 x 5 -> smaller edge (width 5) becomes 3, height int(3 * 6 / 5) = 3
    assert out.shape == (3, 3, 3) and out.dtype == np.uint8
    tall = np.zeros((40, 10), np.uint8)
    assert T.Resize(4)(tall).shape == (16, 4)
    assert T.Resize(4, max_size=10)(tall).shape == (10, 2)  # the long edge capped, the short one scaled
    as_float = TF.resize(_t(rgb.transpose(2, 0, 1).astype(np.float64)), [3, 3]).numpy().transpose(1, 2, 0)
    np.testing.assert_array_equal(out, np.floor(as_float + 0.5).astype(np.uint8))
    with pytest.raises(ValueError, match="interpolation .*bicubic.* is not implemented"):
        T.Resize(3, interpolation=T.InterpolationMode.BICUBIC)(rgb)


def test_center_crop_offsets_round_as_torchvision(rgb):
    out = T.CenterCrop(3)(rgb)  # (6 - 3) / 2 = 1.5 rounds to 2; (5 - 3) / 2 = 1
    np.testing.assert_array_equal(out, rgb[2:5, 1:4])
    t = T.CenterCrop((4, 2))(_t(rgb.transpose(2, 0, 1)))
    np.testing.assert_array_equal(t.numpy(), rgb.transpose(2, 0, 1)[:, 1:5, 2:4])
    big = T.CenterCrop(8)(rgb)  # larger than the image: zero borders, image centred
    assert big.shape == (8, 8, 3) and np.array_equal(big[1:7, 1:6], rgb) and big[0].sum() == 0


def test_pad_modes_match_torch_and_numpy(rgb):
    x = rgb.transpose(2, 0, 1).astype(np.float64)
    for mode, torch_mode in (("reflect", "reflect"), ("edge", "replicate"), ("constant", "constant")):
        ours = TF.pad(_t(x), [1, 2, 3, 1], padding_mode=mode)  # left, top, right, bottom
        theirs = torch.nn.functional.pad(torch.from_numpy(x), (1, 3, 2, 1), mode=torch_mode)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    sym = TF.pad(rgb, 2, padding_mode="symmetric")
    np.testing.assert_array_equal(sym, np.pad(rgb, ((2, 2), (2, 2), (0, 0)), mode="symmetric"))
    filled = TF.pad(rgb, (1, 0), fill=(7, 8, 9))
    assert filled.shape == (6, 7, 3) and filled[0, 0].tolist() == [7, 8, 9] and filled[3, -1].tolist() == [7, 8, 9]
    with pytest.raises(ValueError, match="padding_mode"):
        TF.pad(rgb, 1, padding_mode="wrap")
    with pytest.raises(ValueError, match="padding must be"):
        T.Pad((1, 2, 3))


def test_random_crop_with_padding_draws_every_window_from_the_generator():
    img = np.arange(16, dtype=np.uint8).reshape(4, 4)
    crop = T.RandomCrop(4, padding=1)
    taugrad.manual_seed(0)
    seen = {tuple(crop(img).ravel()) for _ in range(200)}
    padded = np.pad(img, 1)
    windows = {tuple(padded[i:i + 4, j:j + 4].ravel()) for i in range(3) for j in range(3)}
    assert seen == windows  # exactly the 9 windows of the padded image, each reached
    taugrad.manual_seed(5)
    first = [crop(img) for _ in range(5)]
    taugrad.manual_seed(5)
    assert all(np.array_equal(a, crop(img)) for a in first)
    with pytest.raises(ValueError, match="larger than input image size"):
        T.RandomCrop(5)(img)
    assert T.RandomCrop(6, pad_if_needed=True)(img).shape == (6, 6)


def test_random_crop_of_a_tensor_is_a_slice_of_it(rgb):
    x = _t(rgb.transpose(2, 0, 1).astype(np.float32))
    out = T.RandomCrop((3, 2))(x)
    assert tuple(out.shape) == (3, 3, 2)
    hits = [(i, j) for i in range(4) for j in range(4) if np.array_equal(x.numpy()[:, i:i + 3, j:j + 2], out.numpy())]
    assert hits


def test_flips_and_their_probability(rgb):
    np.testing.assert_array_equal(TF.hflip(rgb), rgb[:, ::-1])
    np.testing.assert_array_equal(TF.vflip(rgb), rgb[::-1])
    x = _t(rgb.transpose(2, 0, 1).astype(np.float64))
    np.testing.assert_array_equal(TF.hflip(x).numpy(), torch.from_numpy(x.numpy()).flip(-1).numpy())
    assert np.array_equal(T.RandomHorizontalFlip(p=1.0)(rgb), rgb[:, ::-1])
    assert T.RandomHorizontalFlip(p=0.0)(rgb) is rgb
    taugrad.manual_seed(0)
    flips = sum(not np.array_equal(T.RandomHorizontalFlip()(rgb), rgb) for _ in range(400))
    assert 150 < flips < 250


def test_compose_and_lambda_apply_in_order_and_print():
    tf = T.Compose([T.Lambda(lambda v: v + 1), T.Lambda(lambda v: v * 10)])
    assert tf(1) == 20
    assert repr(T.Compose([T.ToTensor(), T.Normalize((0.1307,), (0.3081,))])) == \
        "Compose(\n    ToTensor()\n    Normalize(mean=(0.1307,), std=(0.3081,))\n)"
    with pytest.raises(TypeError, match="callable"):
        T.Lambda(3)
