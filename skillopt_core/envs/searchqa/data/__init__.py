"""Bundled SearchQA sample. This folder is a package only so that setuptools'
``*.jsonl`` package-data rule ships ``sample.jsonl`` in wheels."""
