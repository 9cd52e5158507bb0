"""``torchvision.transforms.functional``: the image operations the transform classes are made of.

An *image* is one of:

* a NumPy array, height x width or height x width x channels (what
  :mod:`taugrad.vision.datasets` hands out, ``uint8`` for real pictures);
* a PIL image, when Pillow is installed (read as its NumPy array);
* a :class:`~taugrad.Tensor` of shape ``(..., C, H, W)`` (what ``to_tensor`` returns).

Geometric operations give back the kind they get: an array for an array or a
PIL image, a tensor for a tensor.  ``crop`` and the flips index a tensor, so
gradients flow through them; ``pad`` and ``resize`` compute on its values and
return a new tensor.
"""
from __future__ import annotations

import enum
import numbers
from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np

from taugrad.tensors.core.dtypes import get_default_dtype
from taugrad.tensors.core.node import Tensor
from taugrad.tensors.ops.creation import from_numpy

__all__ = ["InterpolationMode", "to_tensor", "pil_to_tensor", "normalize", "resize", "crop", "center_crop",
           "pad", "hflip", "vflip", "get_image_size", "get_dimensions"]


class InterpolationMode(enum.Enum):
    """The resampling filters torchvision names; ``resize`` implements NEAREST and BILINEAR."""

    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


def _is_pil(img: Any) -> bool:
    return type(img).__module__.startswith("PIL.")


def _as_array(img: Any, op: str) -> np.ndarray:
    """A NumPy image, height x width [x channels], from an array or a PIL image; anything else is refused."""
    if _is_pil(img):
        array = np.asarray(img)
        return array.astype(np.uint8) * 255 if array.dtype == bool else array  # mode "1": 0/255 as torchvision
    if isinstance(img, np.ndarray):
        if img.ndim not in (2, 3):
            raise ValueError(f"{op}: an image array must be height x width [x channels], got shape {img.shape}")
        return img
    raise TypeError(f"{op}: img should be a NumPy array, a PIL image or a Tensor, got {type(img).__name__}")


def get_dimensions(img: Any) -> List[int]:
    """``[channels, height, width]`` of any image kind."""
    if isinstance(img, Tensor):
        if img.ndim < 2:
            raise TypeError(f"get_dimensions: a tensor image has at least 2 dims, got {img.ndim}")
        return [1 if img.ndim == 2 else int(img.shape[-3]), int(img.shape[-2]), int(img.shape[-1])]
    a = _as_array(img, "get_dimensions")
    return [1 if a.ndim == 2 else a.shape[2], a.shape[0], a.shape[1]]


def get_image_size(img: Any) -> List[int]:
    """``[width, height]`` (PIL's order, as torchvision's)."""
    _, h, w = get_dimensions(img)
    return [w, h]


def to_tensor(pic: Any) -> Tensor:
    """An image as a ``(C, H, W)`` tensor; ``uint8`` values ``v`` become ``v / 255`` in the default float dtype.

    As torchvision: a height x width array gets one channel; an array of any
    other dtype keeps its values and dtype (only bytes are rescaled).
    """
    if isinstance(pic, Tensor):
        raise TypeError("to_tensor: pic should be a PIL Image or a NumPy array, got Tensor")
    array = _as_array(pic, "to_tensor")
    if array.ndim == 2:
        array = array[:, :, None]
    chw = np.ascontiguousarray(array.transpose(2, 0, 1))
    if chw.dtype == np.uint8:
        return from_numpy(chw).to(get_default_dtype()).div(255)
    return from_numpy(chw)


def pil_to_tensor(pic: Any) -> Tensor:
    """An image as a ``(C, H, W)`` tensor of its own dtype, not rescaled."""
    array = _as_array(pic, "pil_to_tensor")
    return from_numpy(np.ascontiguousarray((array[:, :, None] if array.ndim == 2 else array).transpose(2, 0, 1)))


def normalize(tensor: Tensor, mean: Sequence[float], std: Sequence[float], inplace: bool = False) -> Tensor:
    """``(tensor - mean[c]) / std[c]`` for each channel ``c`` of a float ``(..., C, H, W)`` tensor."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"normalize: img should be a Tensor, got {type(tensor).__name__}")
    if not tensor.is_floating_point():
        raise TypeError(f"normalize: input tensor should be a float tensor, got {tensor.dtype}")
    if tensor.ndim < 3:
        raise ValueError("normalize: expected a tensor image of size (..., C, H, W), got tensor.size() = "
                         f"{tuple(tensor.shape)}")
    dtype = tensor.dtype
    mean_t = _channel_values(mean, dtype, tensor)
    std_t = _channel_values(std, dtype, tensor)
    if (std_t == 0).any().item():
        raise ValueError(f"normalize: std evaluated to zero after conversion to {dtype}, leading to division by zero.")
    if inplace:
        return tensor.sub_(mean_t).div_(std_t)
    return tensor.sub(mean_t).div(std_t)


def _channel_values(values: Any, dtype: Any, like: Tensor) -> Tensor:
    """Per-channel constants shaped ``(C, 1, 1)`` (or one number broadcast to every channel)."""
    if isinstance(values, Tensor):
        flat = values.detach().cpu().numpy().reshape(-1)
    else:
        flat = np.asarray(values if isinstance(values, (list, tuple)) else [values], dtype=np.float64).reshape(-1)
    return from_numpy(flat.reshape(-1, 1, 1)).to(dtype=dtype, device=like.device)


def _size_pair(size: Any, op: str) -> Tuple[int, int]:
    """``(height, width)`` from an int (a square) or a 1- or 2-sequence."""
    if isinstance(size, numbers.Integral):
        return int(size), int(size)
    if isinstance(size, Sequence) and len(size) in (1, 2):
        return (int(size[0]), int(size[0])) if len(size) == 1 else (int(size[0]), int(size[1]))
    raise ValueError(f"{op}: size should be an int or a sequence of one or two ints, got {size!r}")


def _new_size(h: int, w: int, size: Any, max_size: Optional[int]) -> Tuple[int, int]:
    """torchvision's output size: an int matches the smaller edge, the longer one scaled and truncated."""
    if isinstance(size, Sequence) and len(size) == 2:
        if max_size is not None:
            raise ValueError("resize: max_size is only supported when size is an int or a one-element sequence")
        return int(size[0]), int(size[1])
    if isinstance(size, Sequence) and len(size) != 1:
        raise ValueError(f"resize: size should be an int or a sequence of one or two ints, got {size!r}")
    short_req = int(size[0] if isinstance(size, Sequence) else size)
    short, long = (w, h) if w <= h else (h, w)
    new_short, new_long = short_req, int(short_req * long / short)
    if max_size is not None:
        if max_size <= short_req:
            raise ValueError(f"resize: max_size = {max_size} must be strictly greater than the requested size "
                             f"for the smaller edge size = {short_req}")
        if new_long > max_size:
            new_short, new_long = int(max_size * new_short / new_long), max_size
    return (new_long, new_short) if w <= h else (new_short, new_long)


def _weights(n_in: int, n_out: int, antialias: bool) -> np.ndarray:
    """The ``(n_out, n_in)`` matrix of a bilinear resampling along one axis.

    Output pixel ``i`` is centred at ``c = (i + 1/2) s`` in input pixels
    (``s = n_in / n_out``), and input pixel ``j`` (centred at ``j + 1/2``) gets
    the triangle weight ``max(0, 1 - |j + 1/2 - c| / f)``, normalised to sum to
    one, with ``f = max(s, 1)`` when antialiasing (the triangle widens to
    cover every input pixel a shrinking output pixel spans, PIL's filter) and
    ``f = 1`` without (plain bilinear; pixels past the edge are the edge's).
    """
    scale = n_in / n_out
    width = max(scale, 1.0) if antialias else 1.0
    centres = (np.arange(n_out) + 0.5) * scale
    if not antialias:
        centres = np.clip(centres, 0.5, n_in - 0.5)  # half-pixel sampling clamps at the border
    dist = np.abs(np.arange(n_in)[None, :] + 0.5 - centres[:, None]) / width
    w = np.clip(1.0 - dist, 0.0, None)
    return w / w.sum(axis=1, keepdims=True)


def _resize_array(a: np.ndarray, out_h: int, out_w: int, mode: InterpolationMode, antialias: bool) -> np.ndarray:
    """Resample the last two axes of ``a`` (float math; the caller rounds bytes back)."""
    h, w = a.shape[-2:]
    if mode in (InterpolationMode.NEAREST, InterpolationMode.NEAREST_EXACT):
        offset = 0.5 if mode is InterpolationMode.NEAREST_EXACT else 0.0
        rows = np.minimum(np.floor((np.arange(out_h) + offset) * h / out_h).astype(int), h - 1)
        cols = np.minimum(np.floor((np.arange(out_w) + offset) * w / out_w).astype(int), w - 1)
        return a[..., rows[:, None], cols[None, :]]
    wy, wx = _weights(h, out_h, antialias), _weights(w, out_w, antialias)
    return np.einsum("oh,...hw,pw->...op", wy, a.astype(np.float64), wx)


def resize(img: Any, size: Any, interpolation: Any = InterpolationMode.BILINEAR, max_size: Optional[int] = None,
           antialias: Optional[bool] = True) -> Any:
    """Resample an image to ``size``: ``(h, w)``, or an int that the smaller edge becomes (the other keeps the aspect).

    Bilinear with ``antialias=True`` (the default) is PIL's and
    ``F.interpolate(..., mode="bilinear", antialias=True)``'s filter (see
    :func:`_weights`); byte images are rounded to the nearest byte, which can
    differ from PIL's fixed-point result by one level.
    """
    mode = InterpolationMode(interpolation.value if isinstance(interpolation, InterpolationMode) else interpolation) \
        if not isinstance(interpolation, int) else _PIL_CODES.get(interpolation)
    if mode not in (InterpolationMode.NEAREST, InterpolationMode.NEAREST_EXACT, InterpolationMode.BILINEAR):
        name = mode.value if mode is not None else repr(interpolation)
        raise ValueError(f"resize: interpolation {name} is not implemented in taugrad (nearest, "
                         "nearest-exact and bilinear are)")
    _, h, w = get_dimensions(img)
    out_h, out_w = _new_size(h, w, size, max_size)
    if isinstance(img, Tensor):
        values = img.detach().cpu().numpy()
        out = _resize_array(values, out_h, out_w, mode, bool(antialias))
        return from_numpy(_back_to(out, values.dtype)).to(device=img.device)
    a = _as_array(img, "resize")
    hwc = a if a.ndim == 3 else a[:, :, None]
    out = _resize_array(hwc.transpose(2, 0, 1), out_h, out_w, mode, antialias is not False).transpose(1, 2, 0)
    out = _back_to(out, a.dtype)
    return np.ascontiguousarray(out if a.ndim == 3 else out[:, :, 0])


_PIL_CODES = {0: InterpolationMode.NEAREST, 2: InterpolationMode.BILINEAR, 3: InterpolationMode.BICUBIC}


def _back_to(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Resampled values in the image's own dtype: integers rounded and clipped to the dtype's range."""
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return np.clip(np.floor(values + 0.5), info.min, info.max).astype(dtype)
    return values.astype(dtype)


def crop(img: Any, top: int, left: int, height: int, width: int) -> Any:
    """The ``height`` x ``width`` window whose top-left corner is ``(top, left)``; parts outside the image are 0."""
    _, h, w = get_dimensions(img)
    pads = [max(-left, 0), max(-top, 0), max(left + width - w, 0), max(top + height - h, 0)]
    if any(pads):  # torchvision pads with zeros first, then crops
        img = pad(img, pads)
        top, left = top + pads[1], left + pads[0]
    if isinstance(img, Tensor):
        return img[..., top:top + height, left:left + width]
    return _as_array(img, "crop")[top:top + height, left:left + width]


def center_crop(img: Any, output_size: Any) -> Any:
    """The centred window of ``output_size``; offsets ``round((h - th) / 2)`` as torchvision rounds them."""
    th, tw = _size_pair(output_size, "center_crop")
    _, h, w = get_dimensions(img)
    if th > h or tw > w:
        pads = [(tw - w) // 2 if tw > w else 0, (th - h) // 2 if th > h else 0,
                (tw - w + 1) // 2 if tw > w else 0, (th - h + 1) // 2 if th > h else 0]
        img = pad(img, pads)
        _, h, w = get_dimensions(img)
        if th == h and tw == w:
            return img
    return crop(img, int(round((h - th) / 2.0)), int(round((w - tw) / 2.0)), th, tw)


_NP_MODES = {"constant": "constant", "edge": "edge", "reflect": "reflect", "symmetric": "symmetric"}


def _pad_widths(padding: Any) -> Tuple[int, int, int, int]:
    """``(left, top, right, bottom)`` from an int, a pair ``(left/right, top/bottom)`` or a 4-sequence."""
    if isinstance(padding, numbers.Integral):
        p = int(padding)
        return p, p, p, p
    if isinstance(padding, Sequence) and len(padding) in (1, 2, 4):
        p = [int(v) for v in padding]
        if len(p) == 1:
            return p[0], p[0], p[0], p[0]
        if len(p) == 2:
            return p[0], p[1], p[0], p[1]
        return p[0], p[1], p[2], p[3]
    raise ValueError(f"pad: padding must be an int or a sequence of 1, 2 or 4 ints, got {padding!r}")


def pad(img: Any, padding: Any, fill: Any = 0, padding_mode: str = "constant") -> Any:
    """Add borders: ``padding`` as torchvision (int, ``(lr, tb)`` or ``(l, t, r, b)``), filled per ``padding_mode``.

    ``constant`` writes ``fill``; ``edge`` repeats the border pixel;
    ``reflect`` mirrors without repeating it, ``symmetric`` with it.
    """
    if padding_mode not in _NP_MODES:
        raise ValueError(f"pad: padding_mode should be constant, edge, reflect or symmetric, got {padding_mode!r}")
    left, top, right, bottom = _pad_widths(padding)
    if min(left, top, right, bottom) < 0:
        raise ValueError(f"pad: negative padding {padding!r} is not supported")
    tensor = isinstance(img, Tensor)
    a = img.detach().cpu().numpy() if tensor else _as_array(img, "pad")
    widths = [(0, 0)] * a.ndim
    hw = (a.ndim - 2, a.ndim - 1) if tensor or a.ndim == 2 else (0, 1)
    widths[hw[0]], widths[hw[1]] = (top, bottom), (left, right)
    if padding_mode == "constant":
        fills = np.asarray(fill, dtype=np.float64).reshape(-1)
        if fills.size > 1 and not tensor and a.ndim == 3:  # one fill per channel
            out = np.stack([np.pad(a[:, :, c], widths[:2], constant_values=fills[c % fills.size])
                            for c in range(a.shape[2])], axis=2)
        else:
            out = np.pad(a, widths, constant_values=fills[0])
    else:
        out = np.pad(a, widths, mode=_NP_MODES[padding_mode])
    return from_numpy(np.ascontiguousarray(out)).to(device=img.device) if tensor else out


def hflip(img: Any) -> Any:
    """The image mirrored left to right."""
    if isinstance(img, Tensor):
        return img.flip(-1)
    return _as_array(img, "hflip")[:, ::-1].copy()


def vflip(img: Any) -> Any:
    """The image mirrored top to bottom."""
    if isinstance(img, Tensor):
        return img.flip(-2)
    return _as_array(img, "vflip")[::-1].copy()


ImageLike = Union[np.ndarray, Tensor]
