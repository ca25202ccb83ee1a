"""Every MATLAB function of this package, as ``dlformat`` exports them; importing this module also
fills ``DLArray.__torch_function__``'s table (:mod:`._interop`)."""

from __future__ import annotations

from . import _creation, _device, _elementwise, _interop, _labels, _queries, _reductions, _scaling, _shape
from ._creation import *  # noqa: F403
from ._device import *  # noqa: F403
from ._elementwise import *  # noqa: F403
from ._labels import *  # noqa: F403
from ._queries import *  # noqa: F403
from ._reductions import *  # noqa: F403
from ._scaling import *  # noqa: F403
from ._shape import *  # noqa: F403

__all__ = sorted(
    {
        *_creation.__all__,
        *_device.__all__,
        *_elementwise.__all__,
        *_labels.__all__,
        *_queries.__all__,
        *_reductions.__all__,
        *_scaling.__all__,
        *_shape.__all__,
    }
)

del _interop  # imported for its table only
