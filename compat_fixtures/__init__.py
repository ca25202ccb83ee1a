"""Data files of MATLAB compatibility facts; installed as ``dlformat.compat_fixtures``."""
