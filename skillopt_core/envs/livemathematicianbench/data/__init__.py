"""Bundled LiveMathematicianBench sample (two months, written by the team in
the published ``<YYYYMM>/qa_<YYYYMM>_final.json`` layout). A package only so
that setuptools ships the data files in wheels."""
