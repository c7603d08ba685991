"""The configs shipped with coevo, installed as the package ``coevo.configs`` (see pyproject.toml):
``coevo train --config NAME`` takes one by name (``smoke``, ``tiny``, ``single_gpu``,
``multi_gpu_zero3``) from anywhere; a path inside a config resolves against its own directory."""
