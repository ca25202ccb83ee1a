"""``dlformat._rearrange.rearrange`` against ``einops.rearrange``: the same values, shape and
strides (a view where einops gives one) for the patterns the format plans build, and einops
itself for every other pattern."""

from __future__ import annotations

import einops
import pytest
import torch

from dlformat._rearrange import _compile, rearrange

CASES = [
    # pattern, input shape, compiled to one permute and reshape
    ("a b c -> c b a", (2, 3, 4), True),
    ("a b c -> (c a) b", (2, 3, 4), True),
    ("1 b c -> c b", (1, 3, 4), True),
    ("a 1 c -> (c a)", (2, 1, 4), True),
    ("1 1 h -> h", (1, 1, 5), True),
    ("a b -> b 1 a", (2, 3), True),
    ("a b -> (b a) 1", (2, 3), True),
    ("s0 s1 c0 b0 -> b0 (c0 s1 s0)", (2, 3, 4, 5), True),
    ("t0 b0 h -> h b0 t0", (2, 3, 4), True),
    ("b0 c0 -> c0 b0", (1, 8), True),
    ("a b -> a b", (2, 3), True),
    ("b (h d) -> b h d", (2, 6), False),  # a group on the left: einops
    ("a b -> a b c", (2, 3), False),  # an axis from nowhere: einops (and its error)
    ("a b -> a", (2, 3), False),  # an axis dropped: einops (and its error)
]


@pytest.mark.parametrize(("pattern", "shape", "compiled"), CASES)
def test_same_as_einops(pattern, shape, compiled):
    assert (_compile(pattern) is not None) == compiled
    x = torch.randn(shape)
    try:
        expected = einops.rearrange(x, pattern, **({"h": 2} if "(h d)" in pattern else {}))
    except einops.EinopsError:
        with pytest.raises(einops.EinopsError):
            rearrange(x, pattern)
        return
    got = rearrange(x, pattern, **({"h": 2} if "(h d)" in pattern else {}))
    assert got.shape == expected.shape and got.stride() == expected.stride()
    assert torch.equal(got, expected)


def test_a_dropped_axis_of_size_other_than_1_is_einops_error():
    with pytest.raises(einops.EinopsError):
        rearrange(torch.randn(2, 3, 4), "1 b c -> c b")


def test_a_tensor_of_another_rank_is_einops_error():
    with pytest.raises(einops.EinopsError):
        rearrange(torch.randn(2, 3), "a b c -> c b a")
