"""SGLang 0.5.23 in its own venv (`$(scripts/setup_sglang.sh) -m pytest -q tests/integrations/sglang`);
the main venv has no sglang, so these tests skip there at once."""

import pytest

pytest.importorskip("sglang")

from . import _no_torchvision  # noqa: E402

_no_torchvision.install()
