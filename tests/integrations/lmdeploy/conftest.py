"""These tests need LMDeploy itself (the venv scripts/setup_lmdeploy.sh builds): skipped elsewhere."""

import pytest

pytest.importorskip("lmdeploy", reason="LMDeploy is not installed: run these under $(scripts/setup_lmdeploy.sh)")
