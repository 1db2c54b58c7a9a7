# The behavegate GitHub Action. The base is pinned by digest; override the ARG
# only to build where that digest cannot be pulled (e.g. local tests).
ARG PYTHON_IMAGE=python:3.12-slim@sha256:78387bc3881b8273120a12ebe6c1ab22b018ccc2c9adf565ae1ac9b536e184ea
FROM ${PYTHON_IMAGE}

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1

# Only the package: no tests, examples or repository metadata in the image.
COPY pyproject.toml README.md /opt/behavegate/
COPY src /opt/behavegate/src
RUN pip install --no-cache-dir /opt/behavegate \
    && rm -rf /opt/behavegate \
    && behavegate --version

COPY entrypoint /entrypoint

# No USER and no WORKDIR: the runner needs root and mounts /github/workspace itself.
ENTRYPOINT ["/entrypoint"]
