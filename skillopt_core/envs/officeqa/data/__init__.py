"""Bundled OfficeQA sample (team-written questions over synthetic bulletin pages).
A package only so that setuptools ships the data files in wheels."""
