"""lmparse inside LMDeploy 0.18.0: run as ``$(scripts/setup_lmdeploy.sh) -m pytest -q tests/integrations/lmdeploy``."""
