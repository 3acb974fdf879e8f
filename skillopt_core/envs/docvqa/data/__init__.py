"""Bundled DocVQA sample (scripts/samples/docvqa.py writes it). A package only so
that setuptools ships the data files in wheels."""
