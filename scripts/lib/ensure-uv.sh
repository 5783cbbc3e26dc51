# Sourced by the setup scripts: puts uv (pinned, from PyPI) on PATH unless one is there already.
if ! command -v uv > /dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check uv==0.13.9 \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages uv==0.13.9
  hash -r
fi
