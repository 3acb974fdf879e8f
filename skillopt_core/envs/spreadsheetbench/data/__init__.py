"""Bundled SpreadsheetBench sample (scripts/samples/spreadsheetbench.py writes it).
A package only so that setuptools ships the data files in wheels."""
